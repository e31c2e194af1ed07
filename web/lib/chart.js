import { h, s } from './dom.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** "2026-11-21" → "21 Nov" (a UTC day, as the server counts it). */
const shortDay = (day) => `${Number(day.slice(8, 10))} ${MONTHS[Number(day.slice(5, 7)) - 1] ?? ''}`;

/**
 * Sessions per day (light bar) with the crash-free part (dark bar over it), as inline SVG. A
 * table with the same numbers follows for screen readers.
 */
export function dailyChart(days) {
  // The SVG scales to its box: on a phone it is drawn narrower (in its own units) with fewer,
  // larger labels, so they stay readable and never overlap.
  const narrow = window.matchMedia('(max-width: 640px)').matches;
  const W = narrow ? 360 : 720, H = narrow ? 200 : 180, padL = narrow ? 30 : 34, padB = 22, padT = 8;
  const maxLabels = narrow ? 4 : 8;
  const max = Math.max(1, ...days.map((d) => d.sessions));
  const bw = (W - padL) / days.length;
  const y = (v) => padT + (H - padT - padB) * (1 - v / max);
  const ticks = [0, Math.ceil(max / 2), max].filter((v, i, a) => a.indexOf(v) === i);
  const labelEvery = Math.max(1, Math.ceil(days.length / maxLabels));
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-labelledby': 'chart-title' },
    s('title', { id: 'chart-title' }, 'Sessions and crash-free sessions per UTC day'),
    ticks.map((t) => [
      s('line', { x1: padL, x2: W, y1: y(t), y2: y(t), class: 'grid' }),
      s('text', { x: padL - 4, y: y(t) + 4, 'text-anchor': 'end', class: 'axis' }, t),
    ]),
    days.map((d, i) => {
      const x = padL + i * bw + bw * 0.15;
      const w = Math.max(1, bw * 0.7);
      const rate = d.sessions ? Math.round((d.crashFree / d.sessions) * 1000) / 10 : null;
      return s('g', {},
        s('title', {}, `${d.day}: ${d.sessions} sessions, ${d.crashFree} crash-free${rate === null ? '' : ` (${rate}%)`}`),
        s('rect', { x, y: y(d.sessions), width: w, height: Math.max(0, y(0) - y(d.sessions)), class: 'bar-all' }),
        s('rect', { x, y: y(d.crashFree), width: w, height: Math.max(0, y(0) - y(d.crashFree)), class: 'bar-ok' }),
        i % labelEvery === 0 ? s('text', { x: x + w / 2, y: H - 6, 'text-anchor': 'middle', class: 'axis' }, shortDay(d.day)) : null,
      );
    }),
  );
  const total = days.reduce((a, d) => a + d.sessions, 0);
  const ok = days.reduce((a, d) => a + d.crashFree, 0);
  if (!days.length) return h('p.empty', 'No days in this range.');
  return h('figure.chart-box',
    h('figcaption',
      h('strong', 'Sessions per day (UTC)'),
      h('span.legend', h('span.sw.sw-all', { 'aria-hidden': 'true' }), 'all'),
      h('span.legend', h('span.sw.sw-ok', { 'aria-hidden': 'true' }), 'crash-free'),
      h('span.hint', total ? `${total} session${total === 1 ? '' : 's'}, ${Math.round((ok / total) * 1000) / 10}% crash-free` : 'no sessions in this range')),
    svg,
    h('table.sr-only', h('caption', 'Sessions per day'),
      h('thead', h('tr', h('th', 'Day'), h('th', 'Sessions'), h('th', 'Crash-free'))),
      h('tbody', days.map((d) => h('tr', h('td', d.day), h('td', d.sessions), h('td', d.crashFree))))),
  );
}
