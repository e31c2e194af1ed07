import { h, fmtCount, fmtDate, withLoading } from '../lib/dom.js';
import { dash, get, qs } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { groupStatus, kindBadge, pager } from '../lib/widgets.js';

const KINDS = [
  ['', 'crashes & errors'],
  ['fatal', 'fatal crashes'],
  ['nonfatal', 'handled & non-fatal errors'],
  ['message', 'messages (info, warning)'],
];
const SORTS = [
  ['lastSeen', 'last seen'],
  ['firstSeen', 'first seen'],
  ['occurrences', 'occurrences'],
  ['users', 'users affected'],
];

export function crashesView(projectId, params) {
  const page = Number(params.page) || 1;
  const base = `#/p/${projectId}/crashes`;
  const status = h(
    'select',
    {
      id: 'c-status',
      onchange: (e) => navigate(base + qs({ status: e.target.value })),
    },
    ['', 'open', 'acknowledged', 'resolved', 'ignored'].map((v) =>
      h('option', { value: v, selected: (params.status ?? '') === v }, v || 'any'),
    ),
  );
  const kindSel = h(
    'select',
    {
      id: 'c-kind',
      onchange: (e) => navigate(base + qs({ ...params, kind: e.target.value || undefined, page: undefined })),
    },
    KINDS.map(([v, label]) => h('option', { value: v, selected: (params.kind ?? '') === v }, label)),
  );
  const sortSel = h(
    'select',
    {
      id: 'c-sort',
      onchange: (e) =>
        navigate(
          base + qs({ ...params, sort: e.target.value === 'lastSeen' ? undefined : e.target.value, page: undefined }),
        ),
    },
    SORTS.map(([v, label]) => h('option', { value: v, selected: (params.sort ?? 'lastSeen') === v }, label)),
  );
  const envInput = environmentFilter(base, params);
  const searchInput = searchFilter(base, params);
  const list = h('div');
  withLoading(
    list,
    async () => {
      const { status, kind, sort, environment, tag, q: search } = params;
      const q = qs({ status, kind, sort, environment, tag, q: search, page, limit: 50 });
      const r = await get(dash(`/projects/${projectId}/crash-groups${q}`));
      const filtered = status || kind || environment !== undefined || tag || search;
      if (!r.data.length) {
        return h('p.empty', filtered ? 'No crash groups match these filters.' : 'No crashes reported. 🎉');
      }

      return h(
        'div',
        h(
          'p.hint',
          // past the depth the list pages to, the store counts no further
          `${fmtCount(r.total)}${r.totalCapped ? '+' : ''} crash group${r.total === 1 ? '' : 's'} · times in UTC`,
        ),
        h(
          'div.table-wrap',
          h(
            'table.crashes.stack-sm',
            h(
              'thead',
              h(
                'tr',
                [
                  'Crash',
                  'Status',
                  'Occurrences',
                  'Users',
                  'Devices',
                  'First seen (UTC)',
                  'Last seen (UTC)',
                  'Versions',
                ].map((c, i) => h('th', { scope: 'col', class: [2, 3, 4].includes(i) ? 'num' : undefined }, c)),
              ),
            ),
            h(
              'tbody',
              r.data.map((g) =>
                h(
                  'tr',
                  { dataset: { group: g.id, kind: g.isFatal ? 'fatal' : 'nonfatal' } },
                  h(
                    'td',
                    { 'data-label': 'Crash' },
                    h('a.crash-msg', { href: `${base}/${g.id}` }, g.message || '(no message)'),
                    h('div.hint', kindBadge(g), g.platforms?.length ? ` · ${g.platforms.join(', ')}` : ''),
                  ),
                  h('td', { 'data-label': 'Status' }, groupStatus(g.status)),
                  h('td.num', { 'data-label': 'Occurrences' }, fmtCount(g.occurrenceCount)),
                  h('td.num', { 'data-label': 'Users' }, fmtCount(g.usersAffected)),
                  h('td.num', { 'data-label': 'Devices' }, fmtCount(g.affectedDevices)),
                  h('td', { 'data-label': 'First seen (UTC)' }, fmtDate(g.firstSeenAt)),
                  h('td', { 'data-label': 'Last seen (UTC)' }, fmtDate(g.lastSeenAt)),
                  h('td', { 'data-label': 'Versions' }, g.appVersions.join(', ') || '—'),
                ),
              ),
            ),
          ),
        ),
        pager(r.page, r.pages, (p) => base + qs({ ...params, page: p }), 'Crash group pages'),
      );
    },
    'Loading crash groups…',
  );
  return h(
    'section',
    h('h1', 'Crashes'),
    h(
      'div.filters.crash-filters',
      searchInput,
      h('div', h('label', { for: 'c-status' }, 'Status'), status),
      h('div', h('label', { for: 'c-kind' }, 'Kind'), kindSel),
      h('div', h('label', { for: 'c-sort' }, 'Sort by'), sortSel),
      envInput,
    ),
    params.tag
      ? h(
          'p.active-tag',
          'Only occurrences tagged ',
          h('code', { dir: 'auto' }, params.tag),
          ' · ',
          h('a', { href: base + qs({ ...params, tag: undefined, page: undefined }) }, 'show all'),
        )
      : null,
    list,
  );
}

/** The list's search: a word of the message, the error type, a function or a file; empty lists every group. */
function searchFilter(base, params) {
  const input = h('input', {
    id: 'c-search',
    type: 'search',
    value: params.q ?? '',
    placeholder: 'message, type, function, file',
    maxlength: '200',
    autocomplete: 'off',
    size: '28',
  });
  const form = h(
    'form',
    {
      role: 'search',
      onsubmit: (e) => {
        e.preventDefault();
        navigate(base + qs({ ...params, q: input.value.trim() || undefined, page: undefined }));
      },
    },
    h('label', { for: 'c-search' }, 'Search'),
    input,
  );
  input.addEventListener('change', () => form.requestSubmit());
  return h('div', form);
}

/** The list's environment filter: typed (production, staging…); empty shows every environment. */
function environmentFilter(base, params) {
  const input = h('input', {
    id: 'c-env',
    value: params.environment ?? '',
    placeholder: 'any',
    maxlength: '64',
    autocomplete: 'off',
    size: '12',
  });
  const form = h(
    'form',
    {
      onsubmit: (e) => {
        e.preventDefault();
        navigate(base + qs({ ...params, environment: input.value.trim() || undefined, page: undefined }));
      },
    },
    h('label', { for: 'c-env' }, 'Environment'),
    input,
  );
  input.addEventListener('change', () => form.requestSubmit());
  return h('div', form);
}
