import { h, badge, fmtCount, fmtDate, withLoading } from '../lib/dom.js';
import { dash, get, qs } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { dailyChart, lineChart } from '../lib/chart.js';
import { pager } from '../lib/widgets.js';

// The Releases page: one row per app version over all platforms (or the one filtered on), with
// each platform's row under it; sessions and crashed sessions are exact, users an estimate
// beyond a few thousand (±0.8 %); crash-free figures carry their 95 % Wilson score interval and
// a mark when significantly worse than the previous version (src/domain/releaseHealth.ts).
// Trend charts reach every release through a picker; compare opens on newest vs previous.

const RANGES = { '7d': 7, '14d': 14, '30d': 30, '90d': 90 };
const SORTS = {
  version: 'Version',
  sessions: 'Sessions',
  adoption: 'Adoption',
  crashFree: 'Crash-free sessions',
  lastSeen: 'Last seen',
};
/** How each order reads in the Sort menu. */
const ORDER_WORDS = { version: ['newest first', 'oldest first'], lastSeen: ['latest first', 'earliest first'] };
const orderWords = (k, o) => (ORDER_WORDS[k] ?? ['highest first', 'lowest first'])[o === 'desc' ? 0 : 1];
/** How many releases the trend charts show when nobody picked: the newest and the most used. */
const CHART_DEFAULT = 5;
const pct = (v) => (v === null || v === undefined ? '—' : `${v}%`);
const versionName = (v) => v ?? 'no version';
const utcDay = (ms) => new Date(ms).toISOString().slice(0, 10);

/** A crash-free share, coloured the way release health is read: green from 99.5%, amber from 98%, else red. */
function health(v) {
  if (v === null || v === undefined) return '—';
  return badge(`${v}%`, v >= 99.5 ? 'ok' : v >= 98 ? 'warn' : 'bad');
}

/** The share, its 95 % interval under it, and the "worse than the previous release" mark. */
function crashFreeCell(x, field) {
  const ci = x[`${field}Interval`];
  return [
    health(x[field]),
    ci ? h('span.ci', { title: '95 % confidence interval (Wilson score)' }, ` ${ci.low}–${ci.high}%`) : null,
    field === 'crashFreeSessions' && x.significantlyWorse
      ? h(
          'span.worse',
          badge(
            `▼ worse than ${x.previousVersion}`,
            'bad',
            `Significantly worse than ${x.previousVersion}: the 95 % intervals do not overlap`,
          ),
        )
      : null,
  ];
}

function daysOf(from, to) {
  const out = [];
  for (let t = Date.parse(from); t < Date.parse(to); t += 86_400_000) out.push(utcDay(t));
  return out;
}

/** The releases the charts show: those picked in the address, else the newest and the most used. */
function chartedVersions(versions, picked) {
  const known = new Set(versions.map((v) => v.appVersion ?? ''));
  const chosen = (picked ?? '').split(',').filter((v) => v !== '' && known.has(v));
  if (chosen.length) return chosen;
  if (!versions.length) return [];
  const newest = versions[0].appVersion ?? '';
  const used = [...versions]
    .sort((a, b) => b.sessions - a.sessions)
    .map((v) => v.appVersion ?? '')
    .filter((v) => v !== newest);
  return [newest, ...used.slice(0, CHART_DEFAULT - 1)];
}

/** Two releases side by side, the difference of each figure, and their daily crash-free sessions. */
function compareView(projectId, range, platform, a, b) {
  const box = h('div', { id: 'release-compare' });
  withLoading(
    box,
    async () => {
      const p = platform ?? undefined;
      const q = qs({ ...range, a, aPlatform: p, b, bPlatform: p });
      const r = await get(dash(`/projects/${projectId}/releases/compare${q}`));
      if (!r.a || !r.b) return h('p.empty', 'One of these releases had no sessions in this range.');
      const rows = [
        ['Sessions', 'sessions', fmtCount],
        ['Users', 'users', fmtCount],
        ['Crash-free sessions', 'crashFreeSessions', pct],
        ['Crash-free users', 'crashFreeUsers', pct],
        ['Adoption, last 24 h', 'adoption24h', pct],
        ['Adoption, last 7 days', 'adoption7d', pct],
        ['New crash groups', 'newGroups', fmtCount],
        ['Regressed crash groups', 'regressedGroups', fmtCount],
      ];
      const delta = (k) => {
        if (r.a[k] === null || r.b[k] === null) return '—';
        const d = Math.round((r.b[k] - r.a[k]) * 100) / 100;
        const pts = k.startsWith('crashFree') || k.startsWith('adoption') ? ' pts' : '';
        return `${d > 0 ? '+' : ''}${d.toLocaleString('en')}${pts}`;
      };
      const ci = (x) => {
        const i = x.crashFreeSessionsInterval;
        return i ? `${i.low}–${i.high}%` : '—';
      };
      const series = [
        ['a', r.a],
        ['b', r.b],
      ].map(([k, x]) => ({
        label: versionName(x.appVersion),
        points: r.daily.filter((d) => d.release === k),
      }));
      const days = daysOf(r.from, r.to);
      return h(
        'div',
        h(
          'div.table-wrap',
          h(
            'table.compare',
            h(
              'thead',
              h(
                'tr',
                h('th', { scope: 'col' }, 'Figure'),
                h('th', { scope: 'col' }, `A: ${versionName(r.a.appVersion)}`),
                h('th', { scope: 'col' }, `B: ${versionName(r.b.appVersion)}`),
                h('th.num', { scope: 'col' }, 'B − A'),
              ),
            ),
            h(
              'tbody',
              rows.map(([label, k, f]) =>
                h(
                  'tr',
                  { dataset: { figure: k } },
                  h('th', { scope: 'row' }, label),
                  h('td', f(r.a[k])),
                  h('td', f(r.b[k])),
                  h('td.num', delta(k)),
                ),
              ),
              h(
                'tr',
                { dataset: { figure: 'crashFreeSessionsInterval' } },
                h('th', { scope: 'row' }, 'Crash-free sessions, 95 % interval'),
                h('td', ci(r.a)),
                h('td', ci(r.b)),
                h('td.num', r.bSignificantlyWorse ? badge('B significantly worse', 'bad') : 'no significant drop'),
              ),
            ),
          ),
        ),
        lineChart('Crash-free sessions per UTC day', series, days, (p) => p.crashFreeSessions, '%'),
        h('h3', `Sessions of ${versionName(r.b.appVersion)} (B)`),
        dailyChart(
          days.map((day) => {
            const p = series[1].points.find((q) => q.day === day);
            const crashFree = p ? Math.round((p.sessions * (p.crashFreeSessions ?? 100)) / 100) : 0;
            return { day, sessions: p?.sessions ?? 0, crashFree };
          }),
        ),
      );
    },
    'Comparing…',
  );
  return box;
}

/** A cell of a version's or a platform's row. */
function releaseCells(projectId, x, platformRow) {
  return [
    h('td.num', { 'data-label': 'Sessions' }, fmtCount(x.sessions)),
    h('td.num', { 'data-label': 'Users' }, fmtCount(x.users)),
    h('td.num', { 'data-label': 'Crash-free sessions' }, crashFreeCell(x, 'crashFreeSessions')),
    h('td.num', { 'data-label': 'Crash-free users' }, crashFreeCell(x, 'crashFreeUsers')),
    h('td.num', { 'data-label': 'Adoption 24 h' }, pct(x.adoption24h)),
    h('td.num', { 'data-label': 'Adoption 7 d' }, pct(x.adoption7d)),
    h(
      'td.num',
      { 'data-label': 'New groups' },
      x.newGroups && !platformRow
        ? h('a', { href: `#/p/${projectId}/crashes` }, fmtCount(x.newGroups))
        : fmtCount(x.newGroups),
    ),
    h('td.num', { 'data-label': 'Regressed' }, x.regressedGroups ? badge(fmtCount(x.regressedGroups), 'bad') : '0'),
    h('td', { 'data-label': 'Last seen (UTC)' }, fmtDate(x.lastSeenAt)),
  ];
}

export function releasesView(projectId, params) {
  const rangeKey = RANGES[params.range] ? params.range : '14d';
  const page = Number(params.page) || 1;
  const sort = SORTS[params.sort] ? params.sort : 'version';
  const order = params.order === 'asc' ? 'asc' : 'desc';
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const range = { from: utcDay(today - (RANGES[rangeKey] - 1) * 86_400_000), to: utcDay(today) };
  const base = `#/p/${projectId}/releases`;
  const go = (change) => navigate(base + qs({ ...params, ...change }));
  const rangeSel = h(
    'select',
    {
      id: 'r-range',
      onchange: (e) => go({ range: e.target.value, a: undefined, b: undefined, page: undefined }),
    },
    Object.keys(RANGES).map((k) => h('option', { value: k, selected: k === rangeKey }, `Last ${RANGES[k]} days`)),
  );
  const platformSel = h(
    'select',
    {
      id: 'r-platform',
      onchange: (e) => go({ platform: e.target.value || undefined, page: undefined }),
    },
    h('option', { value: '' }, 'all'),
  );
  get(dash(`/projects/${projectId}/sessions/facets`))
    .then((f) => {
      for (const p of f.platforms) platformSel.append(h('option', { value: p, selected: p === params.platform }, p));
    })
    .catch(() => {});
  // The same order as the column headers, for a phone, where the table has no header row.
  const sortSel = h(
    'select',
    {
      id: 'r-sort',
      onchange: (e) => {
        const [k, o] = e.target.value.split(' ');
        go({ sort: k, order: o, page: undefined });
      },
    },
    Object.entries(SORTS).flatMap(([k, label]) =>
      ['desc', 'asc'].map((o) =>
        h('option', { value: `${k} ${o}`, selected: k === sort && o === order }, `${label}, ${orderWords(k, o)}`),
      ),
    ),
  );

  const body = h('div');
  withLoading(
    body,
    async () => {
      const q = qs({ ...range, platform: params.platform, page, limit: 50, sort, order });
      const r = await get(dash(`/projects/${projectId}/releases${q}`));
      if (!r.data.length && r.total) {
        return h(
          'p.empty',
          'No releases on this page. ',
          h('a', { href: base + qs({ ...params, page: undefined }) }, 'Go to the first page'),
        );
      }
      if (!r.data.length) {
        return h('p.empty', 'No sessions in this range yet. Releases appear as apps send sessions with an appVersion.');
      }
      const days = daysOf(r.from, r.to);
      const versions = r.versions.map((v) => v.appVersion ?? '');

      const header = (label, key, num) => {
        if (!key) return h('th', { scope: 'col', class: num ? 'num' : undefined }, label);
        const active = key === sort;
        const next = active && order === 'desc' ? 'asc' : 'desc';
        const ariaSort = active ? (order === 'asc' ? 'ascending' : 'descending') : undefined;
        const href = base + qs({ ...params, sort: key, order: next, page: undefined });
        return h(
          'th',
          { scope: 'col', class: num ? 'num' : undefined, 'aria-sort': ariaSort },
          h(
            'a.sort',
            { href, title: `Sort by ${label.toLowerCase()}` },
            label,
            active ? (order === 'asc' ? ' ▲' : ' ▼') : '',
          ),
        );
      };
      const rows = r.data.flatMap((x) => {
        const many = x.platforms.length > 1;
        return [
          h(
            'tr.version-row',
            { dataset: { release: x.appVersion ?? '' } },
            h(
              'td',
              { 'data-label': 'Release' },
              h('strong', versionName(x.appVersion)),
              ' ',
              x.platforms.map((p) => badge(p.platform ?? 'no platform', 'muted')),
            ),
            releaseCells(projectId, x, false),
          ),
          many
            ? x.platforms.map((p) =>
                h(
                  'tr.platform-row',
                  { dataset: { release: `${x.appVersion ?? ''}|${p.platform ?? ''}` } },
                  h('td', { 'data-label': 'Platform' }, h('span.indent', '↳ '), p.platform ?? 'no platform'),
                  releaseCells(projectId, p, true),
                ),
              )
            : [],
        ];
      });

      // The charts: every release reachable through the picker; the newest always among the defaults.
      const charted = chartedVersions(r.versions, params.chart);
      const hidden = versions.length - charted.length;
      const picker = h(
        'details.chart-picker',
        { open: params.chart ? true : undefined },
        h('summary', `Releases in the charts: ${charted.length} of ${versions.length}`),
        h(
          'fieldset',
          h('legend.sr-only', 'Releases in the charts'),
          r.versions.map((v) =>
            h(
              'label.check',
              h('input', {
                type: 'checkbox',
                value: v.appVersion ?? '',
                checked: charted.includes(v.appVersion ?? ''),
                onchange: () => {
                  const on = [...picker.querySelectorAll('input:checked')].map((i) => i.value);
                  go({ chart: on.length ? on.join(',') : undefined });
                },
              }),
              ` ${versionName(v.appVersion)} (${fmtCount(v.sessions)})`,
            ),
          ),
        ),
      );
      const series = charted.map((v) => ({
        label: versionName(v || null),
        points: r.daily.filter((p) => (p.appVersion ?? '') === v),
      }));

      // Compare: newest against the one before it, unless picked.
      const a = versions.includes(params.a) ? params.a : (versions[1] ?? versions[0]);
      const b = versions.includes(params.b) ? params.b : versions[0];
      const options = (sel) =>
        r.versions.map((x) =>
          h('option', { value: x.appVersion ?? '', selected: (x.appVersion ?? '') === sel }, versionName(x.appVersion)),
        );
      const selA = h('select', { id: 'r-a', onchange: (e) => go({ a: e.target.value, b }) }, options(a));
      const selB = h('select', { id: 'r-b', onchange: (e) => go({ a, b: e.target.value }) }, options(b));
      return h(
        'div',
        h(
          'p.hint',
          `${fmtCount(r.total)} release${r.total === 1 ? '' : 's'} with sessions from ${r.from.slice(0, 10)} ` +
            `to ${utcDay(Date.parse(r.to) - 1)} (UTC days)${r.platform ? ` on ${r.platform}` : ', all platforms'} · ` +
            'crash-free: no fatal crash, with its 95 % confidence interval (Wilson score) · ▼ worse: the interval lies ' +
            "wholly below the previous version's · sessions are exact; users above a few thousand are estimates (±0.8 %)",
        ),
        h(
          'div.table-wrap',
          h(
            'table.releases.stack-sm',
            h(
              'thead',
              h(
                'tr',
                header('Release', 'version'),
                header('Sessions', 'sessions', true),
                header('Users', null, true),
                header('Crash-free sessions', 'crashFree', true),
                header('Crash-free users', null, true),
                header('Adoption 24 h', null, true),
                header('Adoption 7 d', 'adoption', true),
                header('New groups', null, true),
                header('Regressed', null, true),
                header('Last seen (UTC)', 'lastSeen'),
              ),
            ),
            h('tbody', rows),
          ),
        ),
        pager(r.page, r.pages, (p) => base + qs({ ...params, page: p }), 'Release pages'),
        h('h2', 'Trend'),
        picker,
        hidden > 0
          ? h(
              'p.hint',
              { id: 'chart-hidden' },
              `${hidden} release${hidden === 1 ? ' is' : 's are'} not in the charts: pick them above.`,
            )
          : null,
        h(
          'div.release-charts',
          lineChart('Crash-free sessions per UTC day', series, days, (p) => p.crashFreeSessions, '%'),
          lineChart('Sessions per UTC day', series, days, (p) => p.sessions, ''),
        ),
        h('h2', 'Compare two releases'),
        h(
          'div.filters',
          h(
            'div.search-row',
            h('div.field', h('label', { for: 'r-a' }, 'Release A'), selA),
            h('div.field', h('label', { for: 'r-b' }, 'Release B'), selB),
          ),
        ),
        compareView(projectId, range, r.platform, a, b),
      );
    },
    'Loading releases…',
  );

  return h(
    'section',
    h('h1', 'Releases'),
    h(
      'div.filters',
      h(
        'div.search-row',
        h('div.field', h('label', { for: 'r-range' }, 'Range'), rangeSel),
        h('div.field', h('label', { for: 'r-platform' }, 'Platform'), platformSel),
        h('div.field', h('label', { for: 'r-sort' }, 'Sort'), sortSel),
      ),
    ),
    body,
  );
}
