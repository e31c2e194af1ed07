import { h, badge, errorBox, fmtCount, fmtDate, withLoading } from '../lib/dom.js';
import { api, dash, get, qs } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { groupStatus, kindBadge } from '../lib/widgets.js';
import { groupActivity } from '../lib/crashGroupActivity.js';
import { environmentPicker, occurrenceBlock } from '../lib/crashContext.js';
import { device } from '../lib/crashFormat.js';
import { occurrences } from '../lib/crashOccurrences.js';
import { stackBlock } from '../lib/crashStack.js';
import { uploadBlock } from '../lib/crashUpload.js';
import { mergeBlock } from '../lib/crashMerge.js';
import { suspectsPanel } from '../lib/crashSuspects.js';
import { trailPanel } from '../lib/crashTrail.js';

// Button labels for the moves the server allows (any other status: src/domain/crashGroupStatus.ts).
const ACTION = { acknowledged: 'Acknowledge', resolved: 'Resolve', ignored: 'Ignore', open: 'Reopen' };

const kind = (g) => (g.isFatal ? 'fatal' : 'non-fatal') + (g.handled ? ', handled' : '');

/** Where the summary came from, said plainly: a model (which, and when) or the stack trace. */
function summaryBlock(sm) {
  const origin =
    sm.origin === 'ai'
      ? h(
          'p.hint.summary-origin',
          badge('AI', 'info'),
          ` Written by ${sm.model ?? 'a model'}`,
          sm.writtenAt ? [' on ', fmtDate(sm.writtenAt)] : ' when the crash was first seen',
          '; it describes the crash as it was then.',
        )
      : h('p.hint.summary-origin', 'Generated from the stack trace and the group’s current facts (no AI).');
  return h('div.summary', { dataset: { origin: sm.origin } }, h('p', sm.text), origin);
}

/** Who the group hit, one list per dimension: each value with its devices and occurrences. */
function breakdownBlock(b) {
  if (!b) return null;
  const list = (title, rows, id) =>
    h(
      'div.breakdown',
      { id },
      h('h3', title),
      rows.length
        ? h(
            id === 'by-version' ? 'ul.counts.versions' : 'ul.counts',
            rows.map((r) =>
              h(
                'li',
                h('strong', r.value ?? 'unknown'),
                ' ',
                h(
                  'span.hint',
                  `${fmtCount(r.devices)} device${r.devices === 1 ? '' : 's'} · ${fmtCount(r.occurrences)} occurrence${r.occurrences === 1 ? '' : 's'}`,
                ),
              ),
            ),
          )
        : h('p.empty', 'None reported.'),
    );
  return h(
    'div.breakdowns',
    list('Device models', b.models, 'by-model'),
    list('Operating systems', b.osVersions, 'by-os'),
    list('App versions', b.appVersions, 'by-version'),
  );
}

export function crashView(projectId, groupId, params = {}) {
  const body = h('div');
  const environment = params.environment;
  const groupUrl = dash(`/projects/${projectId}/crash-groups/${groupId}${qs({ environment })}`);
  let occ = occurrences(projectId, groupId);
  const suspects = suspectsPanel(projectId, groupId);
  const trail = trailPanel(projectId, groupId);
  const render = (g) => {
    const msg = h('div', { 'aria-live': 'polite' });
    const actions = h(
      'div.actions',
      { role: 'group', 'aria-label': 'Change status' },
      g.allowedTransitions.map((to) =>
        h(
          `button${to === 'resolved' ? '.primary' : ''}`,
          {
            type: 'button',
            dataset: { to },
            onclick: async (e) => {
              actions.querySelectorAll('button').forEach((b) => {
                b.disabled = true;
              });
              e.target.textContent = `${ACTION[to]}…`;
              try {
                render(await api('PATCH', dash(`/projects/${projectId}/crash-groups/${groupId}`), { status: to }));
                body.querySelector('#group-status')?.focus();
              } catch (err) {
                msg.replaceChildren(errorBox(err));
                actions.querySelectorAll('button').forEach((b) => {
                  b.disabled = false;
                });
                e.target.textContent = ACTION[to];
              }
            },
          },
          ACTION[to] ?? to,
        ),
      ),
    );
    const fact = (k, v) => [h('dt', k), h('dd', v === null || v === undefined || v === '' ? '—' : v)];
    const latest = g.latest;
    body.replaceChildren(
      h(
        'div',
        h('h1', g.message || '(no message)'),
        environmentPicker(g, (env) => navigate(`#/p/${projectId}/crashes/${groupId}${qs({ environment: env })}`)),
        g.id !== groupId ? h('p.hint', { id: 'merged-note' }, 'The group you opened was merged into this one.') : null,
        h(
          'p',
          kindBadge(g),
          ' Status: ',
          h('span', { id: 'group-status', tabindex: '-1', 'data-status': g.status }, groupStatus(g.status)),
        ),
        actions,
        msg,
        h(
          'dl.facts',
          fact('Occurrences', fmtCount(g.occurrenceCount)),
          fact('Users affected', h('span', { id: 'users-affected' }, fmtCount(g.usersAffected))),
          fact(
            'Devices affected',
            h(
              'span',
              {
                id: 'devices-affected',
                title:
                  'Distinct devices, told apart by platform, brand, model, OS version, screen, locale and time zone (the SDK sends no device id)',
              },
              fmtCount(g.affectedDevices),
            ),
          ),
          fact('Kind', kind(g)),
          fact('Platforms', h('span', { id: 'platforms' }, (g.platforms ?? []).join(', '))),
          fact('First seen', fmtDate(g.firstSeenAt)),
          fact('Last seen', fmtDate(g.lastSeenAt)),
          fact(
            'Latest on',
            [g.platform, g.osVersion, g.appVersion && `app ${g.appVersion}`].filter(Boolean).join(' · '),
          ),
        ),
        groupActivity(projectId, g.id),
        mergeBlock(projectId, g, (kept) => {
          occ = occurrences(projectId, kept.id);
          render(kept);
        }),
        h('h2', 'Who it hit'),
        breakdownBlock(g.breakdown),
        h('h2', 'Suspects'),
        suspects,
        h('h2', 'Common trails before the crash'),
        trail,
        h('h2', 'Summary'),
        summaryBlock(g.summary),
        h('h2', 'Stack trace of the latest occurrence'),
        latest
          ? h(
              'div',
              h(
                'p.hint',
                fmtDate(latest.occurredAt),
                ' · ',
                latest.userId ? `user ${latest.userId} · ` : '',
                device(latest),
                ' · ',
                h(
                  'a',
                  {
                    href: `#/p/${projectId}/sessions/${latest.sessionId}?crash=${encodeURIComponent(latest.occurredAt)}`,
                  },
                  'open its session at the crash →',
                ),
              ),
              latest.stackTraceComplete
                ? null
                : h(
                    'p.hint',
                    'Only the first five lines were kept for this occurrence: it was recorded before whole traces were stored.',
                  ),
              stackBlock(latest),
              uploadBlock(projectId, latest.appVersion, () =>
                withLoading(
                  body,
                  async () => {
                    render(await get(groupUrl));
                    return body.firstChild;
                  },
                  'Reading the stack again…',
                ),
              ),
            )
          : h('pre.stack', { tabindex: '0' }, g.stackHead),
        h('h2', 'One occurrence'),
        h(
          'p.hint',
          'Its environment, level, user, tags and context, the trail before the crash, ' +
            'and the source around its frames.',
        ),

        occurrenceBlock(projectId, groupId, environment),
        h('h2', 'Occurrences'),
        occ,
      ),
    );
  };
  const root = h('section', h('p', h('a', { href: `#/p/${projectId}/crashes` }, '← Crashes')), body);
  withLoading(
    body,
    async () => {
      render(await get(groupUrl));
      return body.firstChild;
    },
    'Loading crash group…',
  );
  return root;
}
