import { h, s } from './dom.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** "2026-11-21" → "21 Nov" (a UTC day, as the server counts it). */
const shortDay = (day) => `${Number(day.slice(8, 10))} ${MONTHS[Number(day.slice(5, 7)) - 1] ?? ''}`;

// An axis label's widest character at the axis font (12 units on a phone, 11 elsewhere), with room to spare.
const CHAR_W = 7.5;

/**
 * The left margin that holds the widest axis label whole: a fixed margin cut "82.5%" to "2.5%"
 * at 390 px, which read as another number.
 */
export function axisWidth(labels) {
  const longest = Math.max(1, ...labels.map((l) => String(l).length));
  return Math.max(30, Math.ceil(10 + longest * CHAR_W));
}

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4d7c0f', '#be185d'];
export const seriesColor = (n) => COLORS[n % COLORS.length];

/**
 * One line per series over the days, as inline SVG; a table with the same numbers follows for
 * screen readers. `series`: [{ label, points: [{ day, ... }] }]; `value(point)` a number or null.
 */
export function lineChart(title, series, days, value, unit) {
  const narrow = window.matchMedia('(max-width: 640px)').matches;
  const values = series.flatMap((x) => x.points.map(value)).filter((v) => v !== null && v !== undefined);
  if (!values.length) return h('p.empty', 'No sessions in this range.');
  const lo = unit === '%' ? Math.max(0, Math.floor(Math.min(...values) - 1)) : 0;
  const hi = unit === '%' ? 100 : Math.max(1, ...values);
  // A count's middle line is a whole number (a half would print as a rounded "0" or "1").
  const ticks = [lo, unit === '%' ? (lo + hi) / 2 : Math.ceil(hi / 2), hi].filter((v, i, a) => a.indexOf(v) === i);
  const label = (t) => (unit === '%' ? `${Math.round(t * 10) / 10}%` : String(Math.round(t)));
  const W = narrow ? 360 : 720,
    H = narrow ? 200 : 180,
    padL = axisWidth(ticks.map(label)),
    padB = 22,
    padT = 8;
  const x = (i) => padL + (days.length === 1 ? (W - padL) / 2 : (i * (W - padL - 8)) / (days.length - 1));
  const y = (v) => padT + (H - padT - padB) * (1 - (v - lo) / (hi - lo || 1));
  const every = Math.max(1, Math.ceil(days.length / (narrow ? 4 : 8)));
  const id = `t-${Math.random().toString(36).slice(2)}`;
  const svg = s(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-labelledby': id },
    s('title', { id }, title),
    ticks.map((t) => [
      s('line', { x1: padL, x2: W, y1: y(t), y2: y(t), class: 'grid' }),
      s('text', { x: padL - 4, y: y(t) + 4, 'text-anchor': 'end', class: 'axis' }, label(t)),
    ]),
    days.map((d, i) =>
      i % every === 0 ? s('text', { x: x(i), y: H - 6, 'text-anchor': 'middle', class: 'axis' }, shortDay(d)) : null,
    ),
    series.map((ser, n) => {
      const byDay = new Map(ser.points.map((p) => [p.day, p]));
      const pts = days
        .map((d, i) => [i, byDay.get(d)])
        .filter(([, p]) => p && value(p) !== null && value(p) !== undefined);
      return s(
        'g',
        { 'data-series': ser.label },
        s('polyline', {
          points: pts.map(([i, p]) => `${x(i)},${y(value(p))}`).join(' '),
          fill: 'none',
          stroke: seriesColor(n),
          'stroke-width': 2,
        }),
        pts.map(([i, p]) =>
          s(
            'circle',
            { cx: x(i), cy: y(value(p)), r: 3, fill: seriesColor(n) },
            s('title', {}, `${ser.label}, ${p.day}: ${value(p)}${unit}`),
          ),
        ),
      );
    }),
  );
  return h(
    'figure.chart-box',
    h(
      'figcaption',
      h('strong', title),
      // An SVG swatch: the page's CSP refuses style attributes, not SVG presentation attributes.
      series.map((ser, n) =>
        h(
          'span.legend',
          s(
            'svg',
            { width: 12, height: 12, 'aria-hidden': 'true' },
            s('rect', { width: 12, height: 12, rx: 2, fill: seriesColor(n) }),
          ),
          ser.label,
        ),
      ),
    ),
    svg,
    h(
      'div.sr-only',
      h(
        'table',
        h('caption', title),
        h(
          'thead',
          h(
            'tr',
            h('th', 'Day'),
            series.map((ser) => h('th', ser.label)),
          ),
        ),
        h(
          'tbody',
          days.map((d) =>
            h(
              'tr',
              h('td', d),
              series.map((ser) => {
                const p = ser.points.find((q) => q.day === d);
                return h('td', p && value(p) !== null && value(p) !== undefined ? `${value(p)}${unit}` : '—');
              }),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * Sessions per day (light bar) with the crash-free part (dark bar over it), as inline SVG. A
 * table with the same numbers follows for screen readers.
 */
export function dailyChart(days) {
  // The SVG scales to its box: on a phone it is drawn narrower (in its own units) with fewer,
  // larger labels, so they stay readable and never overlap.
  const narrow = window.matchMedia('(max-width: 640px)').matches;
  const max = Math.max(1, ...days.map((d) => d.sessions));
  const W = narrow ? 360 : 720,
    H = narrow ? 200 : 180,
    padL = axisWidth([max]),
    padB = 22,
    padT = 8;
  const maxLabels = narrow ? 4 : 8;
  const bw = (W - padL) / days.length;
  const y = (v) => padT + (H - padT - padB) * (1 - v / max);
  const ticks = [0, Math.ceil(max / 2), max].filter((v, i, a) => a.indexOf(v) === i);
  const labelEvery = Math.max(1, Math.ceil(days.length / maxLabels));
  const svg = s(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-labelledby': 'chart-title' },
    s('title', { id: 'chart-title' }, 'Sessions and crash-free sessions per UTC day'),
    ticks.map((t) => [
      s('line', { x1: padL, x2: W, y1: y(t), y2: y(t), class: 'grid' }),
      s('text', { x: padL - 4, y: y(t) + 4, 'text-anchor': 'end', class: 'axis' }, t),
    ]),
    days.map((d, i) => {
      const x = padL + i * bw + bw * 0.15;
      const w = Math.max(1, bw * 0.7);
      const rate = d.sessions ? Math.round((d.crashFree / d.sessions) * 1000) / 10 : null;
      return s(
        'g',
        {},
        s(
          'title',
          {},
          `${d.day}: ${d.sessions} sessions, ${d.crashFree} crash-free${rate === null ? '' : ` (${rate}%)`}`,
        ),
        s('rect', { x, y: y(d.sessions), width: w, height: Math.max(0, y(0) - y(d.sessions)), class: 'bar-all' }),
        s('rect', { x, y: y(d.crashFree), width: w, height: Math.max(0, y(0) - y(d.crashFree)), class: 'bar-ok' }),
        i % labelEvery === 0
          ? s('text', { x: x + w / 2, y: H - 6, 'text-anchor': 'middle', class: 'axis' }, shortDay(d.day))
          : null,
      );
    }),
  );
  const total = days.reduce((a, d) => a + d.sessions, 0);
  const ok = days.reduce((a, d) => a + d.crashFree, 0);
  if (!days.length) return h('p.empty', 'No days in this range.');
  return h(
    'figure.chart-box',
    h(
      'figcaption',
      h('strong', 'Sessions per day (UTC)'),
      h('span.legend', h('span.sw.sw-all', { 'aria-hidden': 'true' }), 'all'),
      h('span.legend', h('span.sw.sw-ok', { 'aria-hidden': 'true' }), 'crash-free'),
      h(
        'span.hint',
        total
          ? `${total} session${total === 1 ? '' : 's'}, ${Math.round((ok / total) * 1000) / 10}% crash-free`
          : 'no sessions in this range',
      ),
    ),
    svg,
    h(
      'table.sr-only',
      h('caption', 'Sessions per day'),
      h('thead', h('tr', h('th', 'Day'), h('th', 'Sessions'), h('th', 'Crash-free'))),
      h(
        'tbody',
        days.map((d) => h('tr', h('td', d.day), h('td', d.sessions), h('td', d.crashFree))),
      ),
    ),
  );
}
