import { h, s, badge, fmtCount, fmtDate, withLoading } from '../lib/dom.js';
import { dash, get, qs } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { dailyChart } from '../lib/chart.js';
import { pager } from '../lib/widgets.js';

// The Releases page: release health per app version and platform (sessions, users, crash-free
// sessions and users, adoption, new and regressed crash groups), its daily trend, and two
// releases compared. Figures are the server's (src/services/releases.ts); counts of large
// releases are estimates (0.8% standard error; docs/decisions.md, "Release health").

const RANGES = { '7d': 7, '14d': 14, '30d': 30, '90d': 90 };
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2'];
const pct = (v) => (v === null || v === undefined ? '—' : `${v}%`);
const name = (r) => `${r.appVersion ?? 'no version'}${r.platform ? ` (${r.platform})` : ''}`;
const keyOf = (r) => `${r.appVersion ?? ''}|${r.platform ?? ''}`;
const utcDay = (ms) => new Date(ms).toISOString().slice(0, 10);

/** A crash-free share, coloured the way release health is read: green from 99.5%, amber from 98%, else red. */
function health(v) {
  if (v === null || v === undefined) return '—';
  return badge(`${v}%`, v >= 99.5 ? 'ok' : v >= 98 ? 'warn' : 'bad');
}

/** One line per release over the days, as inline SVG; a table with the same numbers for screen readers. */
function lineChart(title, series, days, value, unit) {
  const narrow = window.matchMedia('(max-width: 640px)').matches;
  const W = narrow ? 360 : 720, H = narrow ? 200 : 180, padL = 40, padB = 22, padT = 8;
  const values = series.flatMap((x) => x.points.map(value)).filter((v) => v !== null);
  if (!values.length) return h('p.empty', 'No sessions in this range.');
  const lo = unit === '%' ? Math.max(0, Math.floor(Math.min(...values) - 1)) : 0;
  const hi = unit === '%' ? 100 : Math.max(1, ...values);
  const x = (i) => padL + (days.length === 1 ? (W - padL) / 2 : (i * (W - padL - 8)) / (days.length - 1));
  const y = (v) => padT + (H - padT - padB) * (1 - (v - lo) / (hi - lo || 1));
  const every = Math.max(1, Math.ceil(days.length / (narrow ? 4 : 8)));
  const id = `t-${Math.random().toString(36).slice(2)}`;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-labelledby': id },
    s('title', { id }, title),
    // A count's middle line is a whole number (a half would print as a rounded "0" or "1").
    [lo, unit === '%' ? (lo + hi) / 2 : Math.ceil(hi / 2), hi].filter((v, i, a) => a.indexOf(v) === i).map((t) => [
      s('line', { x1: padL, x2: W, y1: y(t), y2: y(t), class: 'grid' }),
      s('text', { x: padL - 4, y: y(t) + 4, 'text-anchor': 'end', class: 'axis' }, unit === '%' ? `${Math.round(t * 10) / 10}%` : Math.round(t)),
    ]),
    days.map((d, i) => (i % every === 0 ? s('text', { x: x(i), y: H - 6, 'text-anchor': 'middle', class: 'axis' }, d.slice(5)) : null)),
    series.map((ser, n) => {
      const byDay = new Map(ser.points.map((p) => [p.day, p]));
      const pts = days.map((d, i) => [i, byDay.get(d)]).filter(([, p]) => p && value(p) !== null);
      return s('g', {},
        s('polyline', { points: pts.map(([i, p]) => `${x(i)},${y(value(p))}`).join(' '), fill: 'none', stroke: COLORS[n % COLORS.length], 'stroke-width': 2 }),
        pts.map(([i, p]) => s('circle', { cx: x(i), cy: y(value(p)), r: 3, fill: COLORS[n % COLORS.length] },
          s('title', {}, `${ser.label}, ${p.day}: ${value(p)}${unit}`))));
    }),
  );
  return h('figure.chart-box',
    h('figcaption', h('strong', title),
      // An SVG swatch: the page's CSP refuses style attributes, not SVG presentation attributes.
      series.map((ser, n) => h('span.legend', s('svg', { width: 12, height: 12, 'aria-hidden': 'true' }, s('rect', { width: 12, height: 12, rx: 2, fill: COLORS[n % COLORS.length] })), ser.label))),
    svg,
    h('div.sr-only', h('table', h('caption', title),
      h('thead', h('tr', h('th', 'Day'), series.map((ser) => h('th', ser.label)))),
      h('tbody', days.map((d) => h('tr', h('td', d), series.map((ser) => {
        const p = ser.points.find((q) => q.day === d);
        return h('td', p && value(p) !== null ? `${value(p)}${unit}` : '—');
      })))))));
}

function seriesOf(rows, daily) {
  return rows.map((r) => ({ label: name(r), points: daily.filter((p) => keyOf(p) === keyOf(r)) }));
}

function daysOf(from, to) {
  const out = [];
  for (let t = Date.parse(from); t < Date.parse(to); t += 86_400_000) out.push(utcDay(t));
  return out;
}

/** Two releases side by side, the difference of each figure, and their daily crash-free sessions. */
function compareView(projectId, range, a, b) {
  const box = h('div', { id: 'release-compare' });
  withLoading(box, async () => {
    const [av, ap] = a.split('|');
    const [bv, bp] = b.split('|');
    const r = await get(dash(`/projects/${projectId}/releases/compare${qs({ ...range, a: av, aPlatform: ap, b: bv, bPlatform: bp })}`));
    if (!r.a || !r.b) return h('p.empty', 'One of these releases had no sessions in this range.');
    const rows = [
      ['Sessions', 'sessions', fmtCount], ['Users', 'users', fmtCount],
      ['Crash-free sessions', 'crashFreeSessions', pct], ['Crash-free users', 'crashFreeUsers', pct],
      ['Adoption, last 24 h', 'adoption24h', pct], ['Adoption, last 7 days', 'adoption7d', pct],
      ['New crash groups', 'newGroups', fmtCount], ['Regressed crash groups', 'regressedGroups', fmtCount],
    ];
    const delta = (k) => {
      if (r.a[k] === null || r.b[k] === null) return '—';
      const d = Math.round((r.b[k] - r.a[k]) * 1000) / 1000;
      return `${d > 0 ? '+' : ''}${d.toLocaleString('en')}${k.startsWith('crashFree') || k.startsWith('adoption') ? ' pts' : ''}`;
    };
    return h('div',
      h('div.table-wrap', h('table.compare',
        h('thead', h('tr', h('th', { scope: 'col' }, 'Figure'), h('th', { scope: 'col' }, name(r.a)), h('th', { scope: 'col' }, name(r.b)), h('th.num', { scope: 'col' }, 'B − A'))),
        h('tbody', rows.map(([label, k, f]) => h('tr', { dataset: { figure: k } },
          h('th', { scope: 'row' }, label), h('td', f(r.a[k])), h('td', f(r.b[k])), h('td.num', delta(k))))))),
      lineChart('Crash-free sessions per UTC day', seriesOf([r.a, r.b], r.daily), daysOf(r.from, r.to), (p) => p.crashFreeSessions, '%'));
  }, 'Comparing…');
  return box;
}

export function releasesView(projectId, params) {
  const rangeKey = RANGES[params.range] ? params.range : '14d';
  const page = Number(params.page) || 1;
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const range = { from: utcDay(today - (RANGES[rangeKey] - 1) * 86_400_000), to: utcDay(today) };
  const base = `#/p/${projectId}/releases`;
  const go = (change) => navigate(base + qs({ ...params, ...change }));
  const rangeSel = h('select', { id: 'r-range', onchange: (e) => go({ range: e.target.value, a: undefined, b: undefined, page: undefined }) },
    Object.keys(RANGES).map((k) => h('option', { value: k, selected: k === rangeKey }, `Last ${RANGES[k]} days`)));
  const platformSel = h('select', { id: 'r-platform', onchange: (e) => go({ platform: e.target.value, page: undefined }) }, h('option', { value: '' }, 'all'));
  get(dash(`/projects/${projectId}/sessions/facets`)).then((f) => {
    for (const p of f.platforms) platformSel.append(h('option', { value: p, selected: p === params.platform }, p));
  }).catch(() => {});

  const body = h('div');
  withLoading(body, async () => {
    const r = await get(dash(`/projects/${projectId}/releases${qs({ ...range, platform: params.platform, page, limit: 50 })}`));
    if (!r.data.length && r.total) return h('p.empty', 'No releases on this page. ', h('a', { href: base + qs({ ...params, page: undefined }) }, 'Go to the first page'));
    if (!r.data.length) return h('p.empty', 'No sessions in this range yet. Releases appear as apps send sessions with an appVersion.');
    const days = daysOf(r.from, r.to);
    const top = [...r.data].sort((x, y) => y.sessions - x.sessions).slice(0, 5);
    const options = (sel) => r.data.map((x) => h('option', { value: keyOf(x), selected: keyOf(x) === sel }, name(x)));
    // The charts, the pickers and release B's sessions read this page's releases only.
    const onPage = (k) => r.data.some((x) => keyOf(x) === k);
    const a = onPage(params.a) ? params.a : keyOf(top[1] ?? top[0]);
    const b = onPage(params.b) ? params.b : keyOf(top[0]);
    const selA = h('select', { id: 'r-a', onchange: (e) => go({ a: e.target.value, b }) }, options(a));
    const selB = h('select', { id: 'r-b', onchange: (e) => go({ a, b: e.target.value }) }, options(b));
    return h('div',
      h('p.hint', `${fmtCount(r.total)} release${r.total === 1 ? '' : 's'} with sessions from ${r.from.slice(0, 10)} to ${utcDay(Date.parse(r.to) - 1)} (UTC days) · crash-free: no fatal crash · adoption: share of the project's sessions · counts above about a thousand are estimates (±1%)`),
      h('div.table-wrap', h('table.releases.stack-sm',
        h('thead', h('tr', ['Release', 'Sessions', 'Users', 'Crash-free sessions', 'Crash-free users', 'Adoption 24 h', 'Adoption 7 d', 'New groups', 'Regressed', 'Last seen (UTC)']
          .map((c, i) => h('th', { scope: 'col', class: i > 0 && i < 9 ? 'num' : undefined }, c)))),
        h('tbody', r.data.map((x) => h('tr', { dataset: { release: keyOf(x) } },
          h('td', { 'data-label': 'Release' }, h('strong', x.appVersion ?? 'no version'), ' ', x.platform ? badge(x.platform, 'muted') : null),
          h('td.num', { 'data-label': 'Sessions' }, fmtCount(x.sessions)),
          h('td.num', { 'data-label': 'Users' }, fmtCount(x.users)),
          h('td.num', { 'data-label': 'Crash-free sessions' }, health(x.crashFreeSessions)),
          h('td.num', { 'data-label': 'Crash-free users' }, health(x.crashFreeUsers)),
          h('td.num', { 'data-label': 'Adoption 24 h' }, pct(x.adoption24h)),
          h('td.num', { 'data-label': 'Adoption 7 d' }, pct(x.adoption7d)),
          h('td.num', { 'data-label': 'New groups' }, x.newGroups ? h('a', { href: `#/p/${projectId}/crashes` }, fmtCount(x.newGroups)) : '0'),
          h('td.num', { 'data-label': 'Regressed' }, x.regressedGroups ? badge(fmtCount(x.regressedGroups), 'bad') : '0'),
          h('td', { 'data-label': 'Last seen (UTC)' }, fmtDate(x.lastSeenAt)),
        ))))),
      pager(r.page, r.pages, (p) => base + qs({ ...params, page: p, a: undefined, b: undefined }), 'Release pages'),
      h('h2', 'Trend'),
      h('div.release-charts',
        lineChart('Crash-free sessions per UTC day', seriesOf(top, r.daily), days, (p) => p.crashFreeSessions, '%'),
        lineChart('Sessions per UTC day', seriesOf(top, r.daily), days, (p) => p.sessions, '')),
      h('h2', 'Compare two releases'),
      h('div.filters', h('div.search-row',
        h('div.field', h('label', { for: 'r-a' }, 'Release A'), selA),
        h('div.field', h('label', { for: 'r-b' }, 'Release B'), selB))),
      compareView(projectId, { ...range, platform: undefined }, a, b),
      h('h2', 'Sessions of the release B'),
      dailyChart(days.map((day) => {
        const p = r.daily.find((q) => q.day === day && keyOf(q) === b);
        return { day, sessions: p?.sessions ?? 0, crashFree: p ? Math.round((p.sessions * (p.crashFreeSessions ?? 100)) / 100) : 0 };
      })),
    );
  }, 'Loading releases…');

  return h('section',
    h('h1', 'Releases'),
    h('div.filters', h('div.search-row',
      h('div.field', h('label', { for: 'r-range' }, 'Range'), rangeSel),
      h('div.field', h('label', { for: 'r-platform' }, 'Platform'), platformSel))),
    body);
}
