import { h, badge, fmtCount, fmtDate, fmtDuration, withLoading } from '../lib/dom.js';
import { dash, get, qs } from '../lib/api.js';
import { navigate, state } from '../lib/router.js';
import { dailyChart } from '../lib/chart.js';
import { setupGuide } from '../lib/onboarding.js';
import { pager, statusBadge } from '../lib/widgets.js';

const SORTS = [
  ['started:desc', 'Newest first'],
  ['started:asc', 'Oldest first'],
  ['duration:desc', 'Longest first'],
  ['duration:asc', 'Shortest first'],
  ['events:desc', 'Most events'],
  ['events:asc', 'Fewest events'],
];
const FILTER_KEYS = ['q', 'status', 'platform', 'appVersion', 'hasCrash', 'networkErrors', 'from', 'to'];

const select = (id, value, options) =>
  h(
    'select',
    { id, name: id },
    options.map(([v, text]) => h('option', { value: v, selected: (value ?? '') === v }, text)),
  );

function filtersForm(base, params, facets) {
  const q = h('input', {
    id: 'f-q',
    type: 'search',
    value: params.q ?? '',
    placeholder: 'User id or session id',
    maxlength: 200,
    autocomplete: 'off',
  });
  const status = select('f-status', params.status, [
    ['', 'Any status'],
    ['active', 'active'],
    ['completed', 'completed'],
    ['crashed', 'crashed'],
  ]);
  const platform = select('f-platform', params.platform, [
    ['', 'Any platform'],
    ...facets.platforms.map((p) => [p, p]),
  ]);
  const version = select('f-version', params.appVersion, [
    ['', 'Any version'],
    ...facets.appVersions.map((v) => [v, v]),
  ]);
  const crash = select('f-crash', params.hasCrash, [
    ['', 'Any'],
    ['true', 'With a crash or error'],
    ['false', 'Without'],
  ]);
  const net = select('f-net', params.networkErrors, [
    ['', 'Any'],
    ['true', 'With failed requests'],
    ['false', 'Without'],
  ]);
  const from = h('input', { id: 'f-from', type: 'date', value: params.from ?? '' });
  const to = h('input', { id: 'f-to', type: 'date', value: params.to ?? '' });
  const sort = select('f-sort', `${params.sort ?? 'started'}:${params.order ?? 'desc'}`, SORTS);
  const active = FILTER_KEYS.filter((k) => k !== 'q' && params[k]).length;
  const field = (id, text, el) => h('div.field', h('label', { for: id }, text), el);
  return h(
    'form.filters',
    {
      role: 'search',
      onsubmit: (e) => {
        e.preventDefault();
        const [s, o] = sort.value.split(':');
        navigate(
          base +
            qs({
              q: q.value.trim(),
              status: status.value,
              platform: platform.value,
              appVersion: version.value,
              hasCrash: crash.value,
              networkErrors: net.value,
              from: from.value,
              to: to.value,
              sort: s === 'started' ? undefined : s,
              order: o === 'desc' ? undefined : o,
            }),
        );
      },
    },
    h(
      'div.search-row',
      field('f-q', 'Search', q),
      field('f-sort', 'Sort', sort),
      h('div.filter-actions', h('button.primary', { type: 'submit' }, 'Apply')),
    ),
    // On a phone the filters fold away behind one line; on a laptop they stay open.
    h(
      'details.more-filters',
      { open: active > 0 || window.matchMedia('(min-width: 641px)').matches },
      h('summary', 'Filters', active ? ` (${active})` : ''),
      h(
        'div.filter-grid',
        field('f-status', 'Status', status),
        field('f-platform', 'Platform', platform),
        field('f-version', 'App version', version),
        field('f-crash', 'Crashes', crash),
        field('f-net', 'Network errors', net),
        field('f-from', 'From (UTC day)', from),
        field('f-to', 'To (UTC day, included)', to),
        h('div.filter-actions', h('a', { href: base }, 'Reset all')),
      ),
    ),
  );
}

export function sessionsView(projectId, params) {
  const page = Number(params.page) || 1;
  const base = `#/p/${projectId}/sessions`;
  const filtered = FILTER_KEYS.some((k) => params[k]);

  const chart = h('div.chart-slot');
  withLoading(
    chart,
    async () =>
      dailyChart((await get(dash(`/projects/${projectId}/daily${qs({ from: params.from, to: params.to })}`))).data),
    'Loading chart…',
  );

  const filters = h('div');
  withLoading(
    filters,
    async () => filtersForm(base, params, await get(dash(`/projects/${projectId}/sessions/facets`))),
    'Loading filters…',
  );

  const list = h('div');
  withLoading(
    list,
    async () => {
      const r = await get(
        dash(
          `/projects/${projectId}/sessions${qs({
            q: params.q,
            status: params.status,
            platform: params.platform,
            appVersion: params.appVersion,
            hasCrash: params.hasCrash,
            networkErrors: params.networkErrors,
            from: params.from,
            to: params.to,
            sort: params.sort,
            order: params.order,
            page,
            limit: 50,
          })}`,
        ),
      );
      if (!r.data.length) {
        if (r.total)
          return h(
            'p.empty',
            'No sessions on this page. ',
            h('a', { href: base + qs({ ...params, page: 1 }) }, 'Go to the first page'),
          );
        if (filtered)
          return h('p.empty', 'No sessions match these filters. ', h('a', { href: base }, 'Clear the filters'));
        // An empty project: how to send the first session.
        return h(
          'div',
          h('p.empty', 'No sessions yet. They appear here as soon as your app sends them.'),
          setupGuide(projectId, state.newKeys[projectId] ?? null),
        );
      }
      const rows = r.data.map((x) => {
        const href = `#/p/${projectId}/sessions/${x.id}`;
        return h(
          'tr',
          { dataset: { session: x.id } },
          h(
            'td',
            { 'data-label': 'Started (UTC)' },
            h('a', { href }, fmtDate(x.startedAt)),
            h('div.hint.mono', x.id.slice(0, 8)),
          ),
          h(
            'td',
            { 'data-label': 'Status' },
            statusBadge(x.status),
            // A crashed session already says so: hasCrash without it means handled errors only, and the
            // session counts as crash-free (as the chart and the Releases page count it), so no red crash mark.
            x.hasCrash && x.status !== 'crashed'
              ? badge(
                  'handled error',
                  'muted',
                  'A handled error was reported; the session did not crash and counts as crash-free',
                )
              : null,
            x.hasNetworkErrors
              ? badge('⚠ network errors', 'warn', 'At least one request failed (status ≥ 400 or a connection error)')
              : null,
          ),
          h(
            'td',
            { 'data-label': 'Platform' },
            x.platform ?? '—',
            x.osVersion ? h('span.hint', ` ${x.osVersion}`) : null,
          ),
          h('td', { 'data-label': 'App version' }, x.appVersion ?? '—'),
          h('td.num', { 'data-label': 'Duration' }, fmtDuration(x.duration)),
          h('td.num', { 'data-label': 'Events' }, fmtCount(x.eventCount)),
          h('td', { 'data-label': 'User' }, x.userId ?? '—'),
        );
      });
      return h(
        'div',
        h(
          'p.hint',
          `${fmtCount(r.total)} session${r.total === 1 ? '' : 's'}${filtered ? ' match' : ''} · times in UTC`,
        ),
        h(
          'div.table-wrap',
          h(
            'table.sessions.stack-sm',
            h(
              'thead',
              h(
                'tr',
                ['Started (UTC)', 'Status', 'Platform', 'App version', 'Duration', 'Events', 'User'].map((c, i) =>
                  h('th', { scope: 'col', class: [4, 5].includes(i) ? 'num' : undefined }, c),
                ),
              ),
            ),
            h('tbody', rows),
          ),
        ),
        pager(r.page, r.pages, (p) => base + qs({ ...params, page: p }), 'Session pages'),
      );
    },
    'Loading sessions…',
  );

  return h('section', h('h1', 'Sessions'), chart, filters, list);
}
