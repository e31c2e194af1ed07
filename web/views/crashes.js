import { h, badge, errorBox, fmtDate, withLoading } from '../lib/dom.js';
import { api, dash, get, qs } from '../lib/api.js';
import { navigate } from '../app.js';
import { pager } from './sessions.js';

const STATUS_KIND = { open: 'bad', acknowledged: 'warn', resolved: 'ok', ignored: 'muted' };
// Button labels for the transitions the server allows (src/domain/crashGroupStatus.ts decides which).
const ACTION = { acknowledged: 'Acknowledge', resolved: 'Resolve', ignored: 'Ignore', open: 'Reopen' };
export const groupStatus = (st) => badge(st, STATUS_KIND[st] ?? 'muted');

export function crashesView(projectId, params) {
  const page = Number(params.page) || 1;
  const base = `#/p/${projectId}/crashes`;
  const status = h('select', {
    id: 'c-status', onchange: (e) => navigate(base + qs({ status: e.target.value })),
  }, ['', 'open', 'acknowledged', 'resolved', 'ignored'].map((v) => h('option', { value: v, selected: (params.status ?? '') === v }, v || 'any')));
  const list = h('div');
  withLoading(list, async () => {
    const r = await get(dash(`/projects/${projectId}/crash-groups${qs({ status: params.status, page, limit: 50 })}`));
    if (!r.data.length) return h('p.empty', params.status ? `No ${params.status} crash groups.` : 'No crashes reported. 🎉');
    return h('div',
      h('div.table-wrap', h('table.crashes.stack-sm',
        h('thead', h('tr', ['Crash', 'Status', 'Occurrences', 'Devices', 'Last seen', 'Versions'].map((c, i) =>
          h('th', { scope: 'col', class: [2, 3].includes(i) ? 'num' : undefined }, c)))),
        h('tbody', r.data.map((g) => h('tr', { dataset: { group: g.id } },
          h('td', { 'data-label': 'Crash' }, h('a', { href: `${base}/${g.id}` }, g.message), h('div.hint', g.isFatal ? 'fatal' : 'non-fatal', g.handled ? ', handled' : '', g.platform ? ` · ${g.platform}` : '')),
          h('td', { 'data-label': 'Status' }, groupStatus(g.status)),
          h('td.num', { 'data-label': 'Occurrences' }, g.occurrenceCount),
          h('td.num', { 'data-label': 'Devices' }, g.affectedDevices),
          h('td', { 'data-label': 'Last seen' }, fmtDate(g.lastSeenAt)),
          h('td', { 'data-label': 'Versions' }, g.appVersions.join(', ') || '—'),
        ))))),
      pager(r.page, r.pages, (p) => base + qs({ ...params, page: p })),
    );
  }, 'Loading crash groups…');
  return h('section',
    h('h1', 'Crashes'),
    h('div.filters', h('div', h('label', { for: 'c-status' }, 'Status'), status)),
    list);
}

export function crashView(projectId, groupId) {
  const body = h('div');
  const render = (g) => {
    const msg = h('div', { 'aria-live': 'polite' });
    const actions = h('div.actions', { role: 'group', 'aria-label': 'Change status' }, g.allowedTransitions.map((to) =>
      h(`button${to === 'resolved' ? '.primary' : ''}`, {
        type: 'button', dataset: { to },
        onclick: async (e) => {
          actions.querySelectorAll('button').forEach((b) => { b.disabled = true; });
          e.target.textContent = `${ACTION[to]}…`;
          try {
            render(await api('PATCH', dash(`/projects/${projectId}/crash-groups/${groupId}`), { status: to }));
            body.querySelector('#group-status')?.focus();
          } catch (err) {
            msg.replaceChildren(errorBox(err));
            actions.querySelectorAll('button').forEach((b) => { b.disabled = false; });
            e.target.textContent = ACTION[to];
          }
        },
      }, ACTION[to] ?? to)));
    const fact = (k, v) => [h('dt', k), h('dd', v ?? '—')];
    body.replaceChildren(h('div',
      h('h1', g.message),
      h('p', 'Status: ', h('span', { id: 'group-status', tabindex: '-1', 'data-status': g.status }, groupStatus(g.status))),
      actions, msg,
      h('dl.facts',
        fact('Occurrences', g.occurrenceCount), fact('Affected devices', g.affectedDevices),
        fact('First seen', fmtDate(g.firstSeenAt)), fact('Last seen', fmtDate(g.lastSeenAt)),
        fact('Kind', `${g.isFatal ? 'fatal' : 'non-fatal'}${g.handled ? ', handled' : ''}`),
        fact('Latest', [g.platform, g.osVersion, g.appVersion && `app ${g.appVersion}`].filter(Boolean).join(' · ')),
        fact('App versions', g.appVersions.join(', ') || '—')),
      h('h2', 'AI summary'),
      g.summary
        ? h('div.summary', h('p', g.summary), g.summarySource ? h('p.hint', `Source: ${g.summarySource}`) : null)
        : h('p.empty', 'The summary is being prepared; it appears here once the alert worker has run.'),
      h('h2', 'Stack trace (first lines)'),
      h('pre.stack', g.stackHead),
    ));
  };
  const root = h('section', h('p', h('a', { href: `#/p/${projectId}/crashes` }, '← Crashes')), body);
  withLoading(body, async () => {
    render(await get(dash(`/projects/${projectId}/crash-groups/${groupId}`)));
    return body.firstChild;
  }, 'Loading crash group…');
  return root;
}
