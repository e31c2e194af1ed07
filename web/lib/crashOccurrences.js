import { h, fmtCount, fmtDate, withLoading } from './dom.js';
import { dash, get, qs } from './api.js';
import { device, platformLine } from './crashFormat.js';

/** The group's occurrences, newest first, each opening its session at the crash. */
export function occurrences(projectId, groupId) {
  const box = h('div');
  const show = (page) =>
    withLoading(
      box,
      async () => {
        const r = await get(
          dash(`/projects/${projectId}/crash-groups/${groupId}/occurrences${qs({ page, limit: 20 })}`),
        );
        if (!r.total) return h('p.empty', 'No occurrences stored.');
        const pages =
          r.pages > 1
            ? h(
                'nav.pager',
                { 'aria-label': 'Occurrence pages' },
                h('button', { type: 'button', disabled: r.page <= 1, onclick: () => show(1) }, '« First'),
                h('button', { type: 'button', disabled: r.page <= 1, onclick: () => show(r.page - 1) }, '← Newer'),
                h('span', `Page ${r.page} of ${fmtCount(r.pages)}`),
                h(
                  'button',
                  { type: 'button', disabled: r.page >= r.pages, onclick: () => show(r.page + 1) },
                  'Older →',
                ),
                h('button', { type: 'button', disabled: r.page >= r.pages, onclick: () => show(r.pages) }, 'Last »'),
              )
            : null;
        return h(
          'div',
          h('p.hint', `${fmtCount(r.total)} occurrence${r.total === 1 ? '' : 's'}, newest first`),
          h(
            'div.table-wrap',
            h(
              'table.occurrences.stack-sm',
              h(
                'thead',
                h(
                  'tr',
                  ['Time (UTC)', 'User', 'App version', 'Device', 'Session'].map((c) => h('th', { scope: 'col' }, c)),
                ),
              ),
              h(
                'tbody',
                r.data.map((o) =>
                  h(
                    'tr',
                    { dataset: { session: o.sessionId } },
                    h(
                      'td',
                      { 'data-label': 'Time (UTC)' },
                      fmtDate(o.occurredAt),
                      o.isFatal ? null : h('div.hint', 'non-fatal'),
                    ),
                    h('td', { 'data-label': 'User' }, o.userId ?? h('span.hint', 'no user id')),
                    h('td', { 'data-label': 'App version' }, o.appVersion ?? '—'),
                    h(
                      'td',
                      { 'data-label': 'Device' },
                      device(o),
                      platformLine(o) ? h('div.hint', platformLine(o)) : null,
                    ),
                    h(
                      'td',
                      { 'data-label': 'Session' },
                      h(
                        'a',
                        {
                          href: `#/p/${projectId}/sessions/${o.sessionId}?crash=${encodeURIComponent(o.occurredAt)}`,
                          'aria-label': `Open session ${o.sessionId.slice(0, 8)} at this crash`,
                        },
                        h('span.mono', o.sessionId.slice(0, 8)),
                        ' at the crash →',
                      ),
                    ),
                  ),
                ),
              ),
            ),
          ),
          pages,
        );
      },
      'Loading occurrences…',
    );
  show(1);
  return box;
}
