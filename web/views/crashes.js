import { h, badge, errorBox, fmtCount, fmtDate, withLoading } from '../lib/dom.js';
import { api, dash, get, qs } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { groupStatus, pager } from '../lib/widgets.js';

// Button labels for the moves the server allows (any other status: src/domain/crashGroupStatus.ts).
const ACTION = { acknowledged: 'Acknowledge', resolved: 'Resolve', ignored: 'Ignore', open: 'Reopen' };

const kind = (g) => (g.isFatal ? 'fatal' : 'non-fatal') + (g.handled ? ', handled' : '');
const device = (o) => [o.brand, o.model].filter(Boolean).join(' ') || '—';
const platformLine = (o) => [o.platform, o.osVersion].filter(Boolean).join(' ');

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
      h('p.hint', `${fmtCount(r.total)} crash group${r.total === 1 ? '' : 's'} · times in UTC`),
      h('div.table-wrap', h('table.crashes.stack-sm',
        h('thead', h('tr', ['Crash', 'Status', 'Occurrences', 'Users', 'Devices', 'Last seen (UTC)', 'Versions'].map((c, i) =>
          h('th', { scope: 'col', class: [2, 3, 4].includes(i) ? 'num' : undefined }, c)))),
        h('tbody', r.data.map((g) => h('tr', { dataset: { group: g.id } },
          h('td', { 'data-label': 'Crash' }, h('a', { href: `${base}/${g.id}` }, g.message || '(no message)'), h('div.hint', kind(g), g.platform ? ` · ${g.platform}` : '')),
          h('td', { 'data-label': 'Status' }, groupStatus(g.status)),
          h('td.num', { 'data-label': 'Occurrences' }, fmtCount(g.occurrenceCount)),
          h('td.num', { 'data-label': 'Users' }, fmtCount(g.usersAffected)),
          h('td.num', { 'data-label': 'Devices' }, fmtCount(g.affectedDevices)),
          h('td', { 'data-label': 'Last seen (UTC)' }, fmtDate(g.lastSeenAt)),
          h('td', { 'data-label': 'Versions' }, g.appVersions.join(', ') || '—'),
        ))))),
      pager(r.page, r.pages, (p) => base + qs({ ...params, page: p }), 'Crash group pages'),
    );
  }, 'Loading crash groups…');
  return h('section',
    h('h1', 'Crashes'),
    h('div.filters', h('div', h('label', { for: 'c-status' }, 'Status'), status)),
    list);
}

/** Where the summary came from, said plainly: a model (which, and when) or the stack trace. */
function summaryBlock(sm) {
  const origin = sm.origin === 'ai'
    ? h('p.hint.summary-origin', badge('AI', 'info'), ` Written by ${sm.model ?? 'a model'}`,
      sm.writtenAt ? [' on ', fmtDate(sm.writtenAt)] : ' when the crash was first seen',
      '; it describes the crash as it was then.')
    : h('p.hint.summary-origin', 'Generated from the stack trace and the group’s current facts (no AI).');
  return h('div.summary', { dataset: { origin: sm.origin } }, h('p', sm.text), origin);
}

/** The group's occurrences, newest first, each opening its session at the crash. */
function occurrences(projectId, groupId) {
  const box = h('div');
  const show = (page) => withLoading(box, async () => {
    const r = await get(dash(`/projects/${projectId}/crash-groups/${groupId}/occurrences${qs({ page, limit: 20 })}`));
    if (!r.total) return h('p.empty', 'No occurrences stored.');
    const pages = r.pages > 1 ? h('nav.pager', { 'aria-label': 'Occurrence pages' },
      h('button', { type: 'button', disabled: r.page <= 1, onclick: () => show(1) }, '« First'),
      h('button', { type: 'button', disabled: r.page <= 1, onclick: () => show(r.page - 1) }, '← Newer'),
      h('span', `Page ${r.page} of ${fmtCount(r.pages)}`),
      h('button', { type: 'button', disabled: r.page >= r.pages, onclick: () => show(r.page + 1) }, 'Older →'),
      h('button', { type: 'button', disabled: r.page >= r.pages, onclick: () => show(r.pages) }, 'Last »')) : null;
    return h('div',
      h('p.hint', `${fmtCount(r.total)} occurrence${r.total === 1 ? '' : 's'}, newest first`),
      h('div.table-wrap', h('table.occurrences.stack-sm',
        h('thead', h('tr', ['Time (UTC)', 'User', 'App version', 'Device', 'Session'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', r.data.map((o) => h('tr', { dataset: { session: o.sessionId } },
          h('td', { 'data-label': 'Time (UTC)' }, fmtDate(o.occurredAt), o.isFatal ? null : h('div.hint', 'non-fatal')),
          h('td', { 'data-label': 'User' }, o.userId ?? h('span.hint', 'no user id')),
          h('td', { 'data-label': 'App version' }, o.appVersion ?? '—'),
          h('td', { 'data-label': 'Device' }, device(o), platformLine(o) ? h('div.hint', platformLine(o)) : null),
          h('td', { 'data-label': 'Session' }, h('a', {
            href: `#/p/${projectId}/sessions/${o.sessionId}?crash=${encodeURIComponent(o.occurredAt)}`,
            'aria-label': `Open session ${o.sessionId.slice(0, 8)} at this crash`,
          }, h('span.mono', o.sessionId.slice(0, 8)), ' at the crash →')),
        ))))),
      pages);
  }, 'Loading occurrences…');
  show(1);
  return box;
}

export function crashView(projectId, groupId) {
  const body = h('div');
  const occ = occurrences(projectId, groupId);
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
    const fact = (k, v) => [h('dt', k), h('dd', v === null || v === undefined || v === '' ? '—' : v)];
    const latest = g.latest;
    body.replaceChildren(h('div',
      h('h1', g.message || '(no message)'),
      h('p', 'Status: ', h('span', { id: 'group-status', tabindex: '-1', 'data-status': g.status }, groupStatus(g.status))),
      actions, msg,
      h('dl.facts',
        fact('Occurrences', fmtCount(g.occurrenceCount)),
        fact('Users affected', h('span', { id: 'users-affected' }, fmtCount(g.usersAffected))),
        fact('Devices affected', fmtCount(g.affectedDevices)),
        fact('Kind', kind(g)),
        fact('First seen', fmtDate(g.firstSeenAt)), fact('Last seen', fmtDate(g.lastSeenAt)),
        fact('Latest on', [g.platform, g.osVersion, g.appVersion && `app ${g.appVersion}`].filter(Boolean).join(' · '))),
      h('h2', 'App versions'),
      g.appVersionCounts.length
        ? h('ul.versions', g.appVersionCounts.map((v) => h('li', h('strong', v.appVersion ?? 'unknown'), ' ',
          h('span.hint', `${fmtCount(v.occurrences)} occurrence${v.occurrences === 1 ? '' : 's'}`))))
        : h('p.empty', 'No app version reported.'),
      h('h2', 'Summary'),
      summaryBlock(g.summary),
      h('h2', 'Stack trace of the latest occurrence'),
      latest
        ? h('div',
          h('p.hint', fmtDate(latest.occurredAt), ' · ', latest.userId ? `user ${latest.userId} · ` : '', device(latest), ' · ',
            h('a', { href: `#/p/${projectId}/sessions/${latest.sessionId}?crash=${encodeURIComponent(latest.occurredAt)}` }, 'open its session at the crash →')),
          latest.stackTraceComplete ? null : h('p.hint', 'Only the first five lines were kept for this occurrence: it was recorded before whole traces were stored.'),
          h('pre.stack', { tabindex: '0', 'aria-label': 'Stack trace' }, latest.stackTrace))
        : h('pre.stack', { tabindex: '0' }, g.stackHead),
      h('h2', 'Occurrences'),
      occ,
    ));
  };
  const root = h('section', h('p', h('a', { href: `#/p/${projectId}/crashes` }, '← Crashes')), body);
  withLoading(body, async () => {
    render(await get(dash(`/projects/${projectId}/crash-groups/${groupId}`)));
    return body.firstChild;
  }, 'Loading crash group…');
  return root;
}
