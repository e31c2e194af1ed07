import { h, badge, errorBox, fmtCount, fmtDate, withLoading } from '../lib/dom.js';
import { api, dash, get, qs } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { groupStatus, pager } from '../lib/widgets.js';
import { groupActivity } from '../lib/crashGroupActivity.js';
import { environmentPicker, occurrenceBlock } from '../lib/crashContext.js';

// Button labels for the moves the server allows (any other status: src/domain/crashGroupStatus.ts).
const ACTION = { acknowledged: 'Acknowledge', resolved: 'Resolve', ignored: 'Ignore', open: 'Reopen' };

const kind = (g) => (g.isFatal ? 'fatal' : 'non-fatal') + (g.handled ? ', handled' : '');
// Fatal crashes and (handled or unhandled) non-fatal errors, told apart at a glance.
const kindBadge = (g) =>
  g.isFatal ? badge('Fatal crash', 'bad') : badge(g.handled ? 'Handled error' : 'Non-fatal error', 'warn');
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
const device = (o) => [o.brand, o.model].filter(Boolean).join(' ') || '—';
const platformLine = (o) => [o.platform, o.osVersion].filter(Boolean).join(' ');

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

/** The group's occurrences, newest first, each opening its session at the crash. */
function occurrences(projectId, groupId) {
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

/**
 * A stack's lines in the <pre>, each marked by what the server parsed of it: app frames, library
 * frames (runtime, framework, OS) and other lines. Library frames are folded while the stack has
 * an app frame (a marker says how many); the text itself stays whole, for copying.
 */
function fillStack(pre, text, frames) {
  const lines = text.split('\n');
  const hasApp = (frames ?? []).some((x) => x.frame?.inApp);
  const nodes = [];
  let run = [];
  const flush = () => {
    if (run.length)
      nodes.push(h('span.lib-fold', { 'aria-hidden': 'true', dataset: { count: String(run.length) } }), ...run);
    run = [];
  };
  lines.forEach((l, i) => {
    const f = frames?.[i]?.frame ?? null;
    const el = h(
      f ? (f.inApp ? 'span.line.app' : 'span.line.lib') : 'span.line',
      l + (i < lines.length - 1 ? '\n' : ''),
    );
    if (f && !f.inApp && hasApp) run.push(el);
    else {
      flush();
      nodes.push(el);
    }
  });
  flush();
  pre.replaceChildren(...nodes);
  return nodes.some((n) => n.classList.contains('lib-fold'));
}

/**
 * The latest occurrence's stack: symbolicated when the release's artifacts map it, the raw one as
 * sent a click away; app frames shown, library frames folded behind a toggle.
 */
function stackBlock(latest) {
  const sym = latest.symbolicatedStack;
  const pre = h('pre.stack.folded', {
    tabindex: '0',
    'aria-label': sym ? 'Stack trace, symbolicated' : 'Stack trace',
    dataset: { view: sym ? 'symbolicated' : 'raw' },
  });
  const fold = h(
    'button',
    {
      type: 'button',
      'aria-pressed': 'false',
      dataset: { show: 'library' },
      onclick: () => {
        const folded = pre.classList.toggle('folded');
        fold.setAttribute('aria-pressed', String(!folded));
      },
    },
    'Library frames',
  );
  const show = (v) => {
    const hasFold =
      v === 'raw' ? fillStack(pre, latest.stackTrace, latest.frames) : fillStack(pre, sym, latest.symbolicatedFrames);
    fold.hidden = !hasFold;
  };
  show(sym ? 'symbolicated' : 'raw');
  const foldBar = h(
    'div.actions.stack-fold',
    fold,
    h('span.hint', " app frames are shown; the runtime's, frameworks' and the OS's are folded"),
  );
  const unreadable = latest.unreadableArtifacts ?? [];
  const bad = unreadable.length
    ? h(
        'p.hint.unreadable-artifacts',
        `Not symbolicated where it needed ${unreadable.join(', ')}: the release's file could not be read as a source map or mapping. Upload it again.`,
      )
    : null;
  if (!sym) {
    return h(
      'div',
      foldBar,
      pre,
      bad ??
        h(
          'p.hint',
          'Shown as sent: no source map or R8/ProGuard mapping of this release maps it (upload them from CI: see the SDK docs, "Build uploads").',
        ),
    );
  }
  const buttons = [
    ['symbolicated', 'Symbolicated'],
    ['raw', 'Raw, as sent'],
  ].map(([v, label]) =>
    h(
      'button',
      {
        type: 'button',
        'aria-pressed': String(v === 'symbolicated'),
        dataset: { show: v },
        onclick: () => {
          show(v);
          pre.dataset.view = v;
          pre.setAttribute('aria-label', v === 'raw' ? 'Stack trace, raw as sent' : 'Stack trace, symbolicated');
          for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.show === v));
        },
      },
      label,
    ),
  );
  return h(
    'div',
    h('div.actions.stack-toggle', { role: 'group', 'aria-label': 'Stack trace view' }, buttons),
    foldBar,
    pre,
    bad,
  );
}

/**
 * Upload a release's source maps or R8/ProGuard mapping.txt from the page (CI should do it with
 * an upload key: docs/sdk.md, "Build uploads"); the stack is read again with them.
 */
function uploadBlock(projectId, appVersion, onDone) {
  const release = h('input', {
    id: 'up-release',
    value: appVersion ?? '',
    required: true,
    placeholder: '1.4.0 or 1.4.0+312',
    autocomplete: 'off',
  });
  const files = h('input', {
    id: 'up-files',
    type: 'file',
    multiple: true,
    accept: '.map,.txt,.js,.mjs,.cjs,.bundle,.jsbundle',
  });
  const msg = h('div', { 'aria-live': 'polite' });
  const button = h('button.primary', { type: 'submit' }, 'Upload');
  const form = h(
    'form.upload',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        if (!files.files?.length || !release.value.trim()) return;
        button.disabled = true;
        msg.replaceChildren(h('p.hint', 'Uploading…'));
        try {
          for (const f of files.files) {
            await api(
              'POST',
              dash(
                `/projects/${projectId}/releases/${encodeURIComponent(release.value.trim())}/artifacts${qs({ name: f.name })}`,
              ),
              f,
            );
          }
          msg.replaceChildren(
            h('p.hint', `${files.files.length} file${files.files.length === 1 ? '' : 's'} uploaded.`),
          );
          onDone();
        } catch (err) {
          msg.replaceChildren(errorBox(err));
        } finally {
          button.disabled = false;
        }
      },
    },
    h(
      'p.hint',
      'Source maps (.map, named as the bundle plus .map) or an Android mapping.txt of the release; CI can do this with an upload key (see the SDK docs, "Build uploads"). iOS dSYMs are not supported.',
    ),
    h('label', { for: 'up-release' }, 'Release (app version, or version+build)'),
    release,
    h('label', { for: 'up-files' }, 'Files'),
    files,
    h('div.actions', button),
    msg,
  );
  return h('details.upload-box', h('summary', 'Upload source maps or mapping.txt'), form);
}

/**
 * Merging by hand: other groups of the project, picked here, become part of this one (their
 * crashes count here from then on, their later crashes land here, and they leave the list).
 */
function mergeBlock(projectId, g, onMerged) {
  const list = h('div.merge-list');
  const msg = h('div', { 'aria-live': 'polite' });
  const button = h('button', { type: 'button', disabled: true }, 'Merge into this group');
  const picked = () => [...list.querySelectorAll('input[type=checkbox]:checked')].map((c) => c.value);
  list.addEventListener('change', () => {
    button.disabled = picked().length === 0;
  });
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      onMerged(await api('POST', dash(`/projects/${projectId}/crash-groups/${g.id}/merge`), { groupIds: picked() }));
    } catch (err) {
      msg.replaceChildren(errorBox(err));
      button.disabled = false;
    }
  });
  const details = h(
    'details.merge',
    {
      ontoggle: () => {
        if (!details.open || list.childElementCount) return;
        withLoading(
          list,
          async () => {
            const others = (
              await get(dash(`/projects/${projectId}/crash-groups${qs({ sort: 'occurrences', limit: 200 })}`))
            ).data.filter((x) => x.id !== g.id);
            return others.length
              ? h(
                  'ul.plain',
                  others.map((x) =>
                    h(
                      'li',
                      h(
                        'label',
                        h('input', { type: 'checkbox', value: x.id }),
                        ' ',
                        x.message || '(no message)',
                        ' ',
                        h('span.hint', `${fmtCount(x.occurrenceCount)} occurrences · ${x.status}`),
                      ),
                    ),
                  ),
                )
              : h('p.empty', 'No other group in this project.');
          },
          "Loading the project's groups…",
        );
      },
    },
    h('summary', 'Merge other groups into this one'),
    h(
      'p.hint',
      'Pick the groups that are this same bug. Their crashes count here, their later crashes land here (no new alert), and they leave the crash list.',
    ),
    list,
    button,
    msg,
  );
  return details;
}

// Suspects and common trails before the crash (docs/dashboard.md, "Suspects and the trail before the crash").
const DIMENSION = {
  release: 'Release',
  platform: 'Platform',
  osVersion: 'OS version',
  deviceModel: 'Device model',
  networkType: 'Network type',
  environment: 'Environment',
};
const dimensionName = (d) => DIMENSION[d] ?? (d.startsWith('tag:') ? `Tag ${d.slice(4)}` : d);
const pct = (x) => `${(x * 100).toFixed(x >= 0.1 || x === 0 ? 0 : 1)}%`;
const times = (x) => `×${x >= 10 ? x.toFixed(0) : x.toFixed(1)}`;
const plural = (n, word) => `${fmtCount(n)} ${word}${n === 1 ? '' : 's'}`;

/** One suspect: its dimension and value, its share in the group and in the baseline, the lift and its bound. */
const suspectRow = (x) =>
  h(
    'tr',
    { dataset: { dimension: x.dimension } },
    h('td', { 'data-label': 'Dimension' }, dimensionName(x.dimension)),
    h('td.suspect-value', { 'data-label': 'Value' }, h('strong', x.value)),
    h(
      'td.num',
      { 'data-label': 'In this group' },
      pct(x.groupShare),
      h('div.hint', `${fmtCount(x.groupCount)} occurrences`),
    ),
    h(
      'td.num',
      { 'data-label': 'In the baseline' },
      pct(x.baselineShare),
      h('div.hint', `${fmtCount(x.baselineCount)} ${x.baselineUnit}`),
    ),
    h(
      'td.num',
      { 'data-label': 'Lift (lower bound)' },
      x.lift === null ? 'new' : times(x.lift),
      h('div.hint', `≥ ${times(x.liftLow)}`),
    ),
  );

/** Values the group's occurrences carry more often than the project's sessions, the strongest first. */
function suspectsPanel(projectId, groupId) {
  const box = h('div.suspects', { id: 'suspects' });
  withLoading(
    box,
    async () => {
      const r = await get(dash(`/projects/${projectId}/crash-groups/${groupId}/suspects`));
      const period = r.period.from
        ? `${r.period.from} to ${r.period.to} (${plural(r.period.daysWithOccurrences, 'day')} with occurrences)`
        : 'no occurrences';
      const method = h('p.hint', `Against ${r.baseline}: ${period}. ${r.method}.`);
      if (!r.suspects.length) {
        return h('div', h('p.empty', 'Nothing stands out: no value is over-represented in this group.'), method);
      }
      const columns = ['Dimension', 'Value', 'In this group', 'In the baseline', 'Lift (lower bound)'];
      return h(
        'div',
        h(
          'div.table-wrap',
          h(
            'table.suspects-table.stack-sm',
            h(
              'thead',
              h(
                'tr',
                columns.map((c, i) => h('th', { scope: 'col', class: i >= 2 ? 'num' : undefined }, c)),
              ),
            ),
            h('tbody', r.suspects.map(suspectRow)),
          ),
        ),
        method,
      );
    },
    'Looking for suspects…',
  );
  return box;
}

const STEP_KIND = { screen: 'Screen', tap: 'Tap', event: 'Event', request: 'Failed request' };
const WINDOWS = [10, 30, 60, 120, 300];

/** One common trail: its steps, how many occurrences followed it, and a session that did, opened at its crash. */
const trailItem = (projectId, sampled) => (t) =>
  h(
    'li.trail',
    h(
      'ol.trail-steps',
      t.steps.map((st) =>
        h(
          'li',
          { dataset: { kind: st.kind } },
          h('span.hint', STEP_KIND[st.kind] ?? st.kind),
          ' ',
          h('span.step-label', st.label),
        ),
      ),
    ),
    h(
      'p.trail-count',
      h('strong', `${fmtCount(t.occurrences)} of ${fmtCount(sampled)}`),
      ` (${pct(t.share)}) · `,
      h(
        'a',
        {
          href: `#/p/${projectId}/sessions/${t.sessionId}?crash=${encodeURIComponent(t.occurredAt)}`,
          'aria-label': `Open session ${t.sessionId.slice(0, 8)}, which followed this trail, at the crash`,
        },
        'open a session that followed it →',
      ),
    ),
  );

/** The most common last steps before the group's latest crashes, each with a session that followed them. */
function trailPanel(projectId, groupId) {
  const list = h('div');
  const load = (window) =>
    withLoading(
      list,
      async () => {
        const r = await get(dash(`/projects/${projectId}/crash-groups/${groupId}/trail${qs({ window })}`));
        const hint = h(
          'p.hint',
          `The last ${r.steps} steps in the ${r.windowSeconds} s before each of the latest ` +
            `${plural(r.sampled, 'occurrence')} (at most ${fmtCount(r.sampleLimit)}); ` +
            `${fmtCount(r.withoutEvents)} had no event in that window. Repeated steps count once.`,
        );
        if (!r.trails.length) {
          return h(
            'div',
            h('p.empty', 'No screens, taps, custom events or failing requests before these crashes.'),
            hint,
          );
        }
        return h('div', hint, h('ol.trails', r.trails.map(trailItem(projectId, r.sampled))));
      },
      'Reading the trails…',
    );
  const select = h(
    'select',
    { id: 'trail-window', onchange: (e) => load(Number(e.target.value)) },
    WINDOWS.map((w) => h('option', { value: String(w), selected: w === 30 }, `${w} s`)),
  );
  load(30);
  return h(
    'div.trail-panel',
    { id: 'trail' },
    h('div.filters', h('div', h('label', { for: 'trail-window' }, 'Before the crash'), select)),
    list,
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
