import { h, s, badge, errorBox, fmtCount, fmtDate, withLoading } from './dom.js';
import { api, dash, get, qs } from './api.js';

// A crash group's activity on its page: the "new" / "regressed" badge, the first and last
// release it was seen in, occurrences and users over 24 h / 14 d / 90 d, who it is assigned to,
// what happened to it (status history: who, when, from what; regressions) and a comment thread.
// Called from views/crash.js; the server's rules are in src/services/crashGroupActivity.ts.

const RANGES = [
  ['24h', 'Last 24 hours'],
  ['14d', 'Last 14 days'],
  ['90d', 'Last 90 days'],
];
const BADGE = {
  new: ['New', 'info', 'first seen in the last 7 days'],
  regressed: ['Regressed', 'bad', 'reopened by a new release in the last 7 days'],
};
export const groupBadge = (b) => (BADGE[b] ? badge(BADGE[b][0], BADGE[b][1], BADGE[b][2]) : null);

/** Occurrences (bars) and users (dots) per bucket, inline SVG, with a table for screen readers. */
function activityChart(r) {
  const narrow = window.matchMedia('(max-width: 640px)').matches;
  const W = narrow ? 360 : 720,
    H = narrow ? 190 : 170,
    padL = 34,
    padB = 22,
    padT = 8;
  const max = Math.max(1, ...r.data.map((b) => b.occurrences));
  const bw = (W - padL) / r.data.length;
  const y = (v) => padT + (H - padT - padB) * (1 - v / max);
  const every = Math.max(1, Math.ceil(r.data.length / (narrow ? 4 : 8)));
  const label = (at) => (r.range === '24h' ? `${at.slice(11, 13)}:00` : at.slice(5, 10));
  const total = r.data.reduce((n, b) => n + b.occurrences, 0);
  const svg = s(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-labelledby': 'activity-title' },
    s('title', { id: 'activity-title' }, 'Occurrences and users over time (UTC)'),
    [0, Math.ceil(max / 2), max]
      .filter((v, i, a) => a.indexOf(v) === i)
      .map((t) => [
        s('line', { x1: padL, x2: W, y1: y(t), y2: y(t), class: 'grid' }),
        s('text', { x: padL - 4, y: y(t) + 4, 'text-anchor': 'end', class: 'axis' }, t),
      ]),
    r.data.map((b, i) => {
      const x = padL + i * bw + bw * 0.15;
      const w = Math.max(1, bw * 0.7);
      return s(
        'g',
        {},
        s(
          'title',
          {},
          `${b.at.slice(0, r.range === '24h' ? 13 : 10).replace('T', ' ')}${r.range === '24h' ? ':00' : ''} UTC: ${b.occurrences} occurrences, ${b.users} users`,
        ),
        s('rect', { x, y: y(b.occurrences), width: w, height: Math.max(0, y(0) - y(b.occurrences)), class: 'bar-all' }),
        b.users ? s('circle', { cx: x + w / 2, cy: y(b.users), r: narrow ? 3 : 2.5, class: 'dot-users' }) : null,
        i % every === 0
          ? s('text', { x: x + w / 2, y: H - 6, 'text-anchor': 'middle', class: 'axis' }, label(b.at))
          : null,
      );
    }),
  );
  return h(
    'figure.chart-box',
    { id: 'group-activity-chart', dataset: { total: String(total) } },
    h(
      'figcaption',
      h('strong', 'Occurrences over time (UTC)'),
      h('span.legend', h('span.sw.sw-all', { 'aria-hidden': 'true' }), 'occurrences'),
      h('span.legend', h('span.sw.sw-users', { 'aria-hidden': 'true' }), 'users'),
      h('span.hint', `${fmtCount(total)} in this range`),
    ),
    svg,
    h(
      'div.sr-only',
      h(
        'table',
        h('caption', 'Occurrences and users'),
        h('thead', h('tr', h('th', 'From (UTC)'), h('th', 'Occurrences'), h('th', 'Users'))),
        h(
          'tbody',
          r.data.map((b) => h('tr', h('td', b.at), h('td', b.occurrences), h('td', b.users))),
        ),
      ),
    ),
  );
}

function historyLine(e) {
  const what =
    e.kind === 'regression'
      ? [
          badge('Regression', 'bad'),
          ` reopened (${e.fromStatus} → ${e.toStatus}) by a crash from ${e.appVersion ?? 'an unknown version'}${e.platform ? ` on ${e.platform}` : ''}`,
        ]
      : e.kind === 'assignee'
        ? [e.detail ? `assigned to ${e.detail}` : 'unassigned']
        : e.kind === 'merge'
          ? [`merged ${(e.detail ?? '').split(', ').filter(Boolean).length} group(s) into this one`]
          : [`${e.fromStatus} → `, h('strong', e.toStatus)];
  return h('li', { dataset: { kind: e.kind } }, fmtDate(e.at), ' · ', h('span.who', e.actor), ': ', what);
}

export function groupActivity(projectId, groupId) {
  const url = (p) => dash(`/projects/${projectId}/crash-groups/${groupId}${p}`);
  const chartBox = h('div');
  const releases = h('p.hint', { id: 'group-releases' });
  const badgeBox = h('span', { id: 'group-badge' });
  const showChart = (range) =>
    withLoading(
      chartBox,
      async () => {
        const r = await get(url(`/activity${qs({ range })}`));
        badgeBox.replaceChildren(groupBadge(r.badge) ?? '');
        releases.replaceChildren(
          'First release seen: ',
          h('strong', r.firstRelease ?? '—'),
          ' · last release seen: ',
          h('strong', r.lastRelease ?? '—'),
        );
        for (const b of tabs.querySelectorAll('button'))
          b.setAttribute('aria-pressed', String(b.dataset.range === range));
        return activityChart(r);
      },
      'Loading the chart…',
    );
  const tabs = h(
    'div.actions',
    { role: 'group', 'aria-label': 'Chart range' },
    RANGES.map(([k, label]) =>
      h('button', { type: 'button', dataset: { range: k }, onclick: () => showChart(k) }, label),
    ),
  );
  showChart('14d');

  const workflow = h('div');
  const renderWorkflow = (d) => workflow.replaceChildren(build(d));
  const build = (d) => {
    const msg = h('div', { 'aria-live': 'polite' });
    const assign = h(
      'select',
      {
        id: 'group-assignee',
        onchange: async (e) => {
          assign.disabled = true;
          try {
            renderWorkflow(await api('PUT', url('/assignee'), { userId: e.target.value || null }));
          } catch (err) {
            msg.replaceChildren(errorBox(err));
            assign.disabled = false;
          }
        },
      },
      h('option', { value: '' }, 'nobody'),
      d.members.map((m) => h('option', { value: m.userId, selected: d.assignee?.userId === m.userId }, m.email)),
    );
    const text = h('textarea', { id: 'comment-body', rows: 3, maxlength: 4000, required: true });
    const form = h(
      'form.comment-form',
      {
        onsubmit: async (e) => {
          e.preventDefault();
          if (!text.value.trim()) return;
          form.querySelector('button').disabled = true;
          try {
            await api('POST', url('/comments'), { body: text.value });
            renderWorkflow(await get(url('/history')));
            workflow.querySelector('#comment-body')?.focus();
          } catch (err) {
            msg.replaceChildren(errorBox(err));
            form.querySelector('button').disabled = false;
          }
        },
      },
      h('label', { for: 'comment-body' }, 'Add a comment'),
      text,
      h('button.primary', { type: 'submit' }, 'Comment'),
    );
    return h(
      'div',
      h('div.field', h('label', { for: 'group-assignee' }, 'Assigned to'), assign),
      msg,
      h('h2', 'History'),
      d.history.length ? h('ol.history', d.history.map(historyLine)) : h('p.empty', 'No status change yet.'),
      h('h2', 'Comments'),
      d.comments.length
        ? h(
            'ol.comments',
            d.comments.map((c) =>
              h('li', h('p.hint', h('span.who', c.author), ' · ', fmtDate(c.createdAt)), h('p.comment-body', c.body)),
            ),
          )
        : h('p.empty', 'No comments yet.'),
      form,
    );
  };
  withLoading(workflow, async () => build(await get(url('/history'))), 'Loading history…');

  return h('div.group-activity', h('h2', 'Activity'), h('p', badgeBox, ' ', releases), tabs, chartBox, workflow);
}
