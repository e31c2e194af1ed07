import { h, badge, fmtDate, fmtDuration, withLoading } from '../lib/dom.js';
import { dash, get, qs } from '../lib/api.js';
import { navigate } from '../app.js';
import { dailyChart } from './chart.js';

export const statusBadge = (st) => badge(st, { active: 'info', completed: 'ok', crashed: 'bad' }[st] ?? 'muted');

export function pager(page, pages, hrefFor) {
  if (pages <= 1) return null;
  return h('nav.pager', { 'aria-label': 'Pages' },
    page > 1 ? h('a', { href: hrefFor(page - 1), rel: 'prev' }, '← Previous') : h('span.hint', '← Previous'),
    h('span', `Page ${page} of ${pages}`),
    page < pages ? h('a', { href: hrefFor(page + 1), rel: 'next' }, 'Next →') : h('span.hint', 'Next →'));
}

export function sessionsView(projectId, params) {
  const page = Number(params.page) || 1;
  const base = `#/p/${projectId}/sessions`;
  const from = h('input', { id: 'f-from', type: 'date', value: params.from ?? '' });
  const to = h('input', { id: 'f-to', type: 'date', value: params.to ?? '' });
  const status = h('select', { id: 'f-status' },
    ['', 'active', 'completed', 'crashed'].map((v) => h('option', { value: v, selected: (params.status ?? '') === v }, v || 'any')));
  const filters = h('form.filters', {
    onsubmit: (e) => {
      e.preventDefault();
      navigate(base + qs({ from: from.value, to: to.value, status: status.value }));
    },
  },
    h('div', h('label', { for: 'f-from' }, 'From'), from),
    h('div', h('label', { for: 'f-to' }, 'To'), to),
    h('div', h('label', { for: 'f-status' }, 'Status'), status),
    h('div.filter-actions', h('button.primary', { type: 'submit' }, 'Apply'), h('a', { href: base }, 'Reset')),
  );

  const chart = h('div.chart-slot');
  withLoading(chart, async () => dailyChart((await get(dash(`/projects/${projectId}/daily${qs({ from: params.from, to: params.to })}`))).data), 'Loading chart…');

  const list = h('div');
  withLoading(list, async () => {
    const r = await get(dash(`/projects/${projectId}/sessions${qs({ from: params.from, to: params.to, status: params.status, page, limit: 50 })}`));
    if (!r.data.length) return h('p.empty', r.total ? 'No sessions on this page.' : 'No sessions match. Sessions appear here as soon as your app sends them.');
    const rows = r.data.map((x) => {
      const href = `#/p/${projectId}/sessions/${x.id}`;
      return h('tr', { dataset: { session: x.id } },
        h('td', { 'data-label': 'Started' }, h('a', { href }, fmtDate(x.startedAt)), h('div.hint.mono', x.id.slice(0, 8))),
        h('td', { 'data-label': 'Status' }, statusBadge(x.status),
          // a crashed session already says so; the mark matters for handled errors in other sessions
          x.hasCrash && x.status !== 'crashed' ? badge('✱ crash', 'bad', 'A crash or error was reported in this session') : null,
          x.hasNetworkErrors ? badge('⚠ network errors', 'warn', 'At least one request failed (status ≥ 400 or a connection error)') : null),
        h('td', { 'data-label': 'Platform' }, x.platform ?? '—', x.osVersion ? h('span.hint', ` ${x.osVersion}`) : null),
        h('td', { 'data-label': 'App version' }, x.appVersion ?? '—'),
        h('td.num', { 'data-label': 'Duration' }, fmtDuration(x.duration)),
        h('td.num', { 'data-label': 'Events' }, x.eventCount),
        h('td', { 'data-label': 'User' }, x.userId ?? '—'),
      );
    });
    return h('div',
      h('p.hint', `${r.total} session${r.total === 1 ? '' : 's'}`),
      h('div.table-wrap', h('table.sessions.stack-sm',
        h('thead', h('tr', ['Started', 'Status', 'Platform', 'App version', 'Duration', 'Events', 'User'].map((c, i) =>
          h('th', { scope: 'col', class: [4, 5].includes(i) ? 'num' : undefined }, c)))),
        h('tbody', rows))),
      pager(r.page, r.pages, (p) => base + qs({ ...params, page: p })),
    );
  }, 'Loading sessions…');

  return h('section', h('h1', 'Sessions'), chart, filters, list);
}
