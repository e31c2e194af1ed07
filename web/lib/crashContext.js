// The crash page's occurrence block: one occurrence at a time (newest first, previous/next),
// its context (environment, level, user, tags, context, dropped values), the trail before the
// crash on one timeline (breadcrumbs and the session's events, the crash last) and the source
// lines around its mapped frames. Everything the app sent is set as text (h() never parses
// HTML), and marked dir="auto" so right-to-left text stays in its own box.
import { h, badge, fmtCount, fmtDate, fmtTime, withLoading } from './dom.js';
import { dash, get, qs } from './api.js';

const LEVEL_KIND = { fatal: 'bad', error: 'warn', warning: 'warn', info: 'info', debug: 'info' };
export const levelBadge = (level) => badge(level, LEVEL_KIND[level] ?? 'info');
const userText = (tag, text) => h(tag, { dir: 'auto' }, text);
// In JSON shown as code, bidi controls are written as escapes: an override character would
// otherwise reorder the rest of its line (keys, quotes) on screen.
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const escapeBidi = (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
const shownJson = (v, indent) => JSON.stringify(v, null, indent).replace(BIDI, escapeBidi);

/** Tags as chips, each a link to the crash list of the occurrences with that tag. */
function tagChips(projectId, tags) {
  const entries = Object.entries(tags ?? {});
  if (!entries.length) return h('p.hint', 'No tags.');
  return h(
    'ul.chips',
    { 'aria-label': 'Tags' },
    entries.map(([k, v]) =>
      h(
        'li.chip',
        { dataset: { tag: k } },
        h(
          'a',
          {
            href: `#/p/${projectId}/crashes${qs({ tag: `${k}=${v}` })}`,
            title: 'Crash groups with this tag',
          },
          userText('span.chip-key', k),
          h('span.chip-sep', ': '),
          userText('span.chip-value', v),
        ),
      ),
    ),
  );
}

function droppedBlock(dropped) {
  if (!dropped?.length) return null;
  return h(
    'div.dropped',
    { role: 'note' },
    h('p', h('strong', 'Not kept from this report: '), 'values the SDK sent that were over a limit or malformed.'),
    h(
      'ul',
      dropped.map((d) => h('li', h('code', d.field), ' ', userText('span', d.reason))),
    ),
  );
}

function timelineBlock(entries) {
  if (entries.length <= 1) return h('p.hint', 'No breadcrumbs or session events before this crash.');
  return h(
    'ol.timeline.crash-trail',
    entries.map((e) => {
      const failed = e.level === 'error' ? '.tl-failed' : '';
      const cls =
        e.source === 'crash' ? '.tl-crash' : e.source === 'event' ? `.tl-${e.kind}${failed}` : '.tl-breadcrumb';
      const level = e.level && e.level !== 'info' ? ` · ${e.level}` : '';
      const note = e.source === 'breadcrumb' ? `breadcrumb${level}` : e.source === 'event' ? 'event' : e.level;
      return h(
        `li.tl${cls}`,
        { dataset: { source: e.source } },
        h('span.tl-time', fmtTime(new Date(e.at).toISOString())),
        h('span.tl-type', { dir: 'auto' }, e.kind),
        h(
          'span.tl-body',
          userText('span', e.message || '—'),
          e.source === 'breadcrumb' && e.data ? h('code.props', { dir: 'ltr' }, shownJson(e.data)) : null,
        ),
        h('span.tl-seq.hint', note),
      );
    }),
  );
}

/** Source lines around each frame a source map maps (from its sourcesContent), the frame's own line marked. */
export function sourceBlock(frames) {
  if (!frames.length) {
    return h('p.hint', 'No source lines: no source map of this release with sourcesContent maps these frames.');
  }
  return h(
    'div.source-frames',
    frames.map((f) =>
      h(
        `div.source-frame${f.inApp ? '' : '.library'}`,
        { dataset: { frame: f.index } },
        h(
          'p.source-where',
          h('code', { dir: 'ltr' }, `${f.file}:${f.line}${f.column ? `:${f.column}` : ''}`),
          f.inApp ? null : h('span.hint', ' · library'),
        ),
        f.lines.length
          ? h(
              'pre.source',
              { tabindex: '0' },
              f.lines.map((l) =>
                h(
                  `span.src-line${l.line === f.line ? '.src-here' : ''}`,
                  h('span.src-no', { 'aria-hidden': 'true' }, String(l.line).padStart(5, ' ')),
                  ' ',
                  l.text,
                  '\n',
                ),
              ),
            )
          : h('p.hint', 'The map has no source text for this file.'),
      ),
    ),
  );
}

/**
 * One occurrence of the group: `environment` scopes which ones (the page's environment filter).
 * Previous/next move one occurrence older or newer.
 */
export function occurrenceBlock(projectId, groupId, environment) {
  const box = h('div.occurrence', { id: 'occurrence' });
  const show = (index) =>
    withLoading(
      box,
      async () => {
        const r = await get(
          dash(`/projects/${projectId}/crash-groups/${groupId}/occurrence${qs({ index, environment })}`),
        );
        const o = r.occurrence;
        if (!o) return h('p.empty', 'No occurrence stored.');
        const fact = (k, v) => [h('dt', k), h('dd', v === null || v === undefined || v === '' ? '—' : v)];
        const nav = h(
          'nav.pager',
          { 'aria-label': 'Occurrences' },
          h(
            'button',
            {
              type: 'button',
              disabled: r.index <= 0,
              dataset: { go: 'newer' },
              onclick: () => show(r.index - 1),
            },
            '← Newer',
          ),

          h('span', { id: 'occurrence-position' }, `Occurrence ${fmtCount(r.index + 1)} of ${fmtCount(r.total)}`),
          h(
            'button',
            {
              type: 'button',
              disabled: r.index + 1 >= r.total,
              dataset: { go: 'older' },
              onclick: () => show(r.index + 1),
            },
            'Older →',
          ),
        );
        const sessionLink = `#/p/${projectId}/sessions/${o.sessionId}?crash=${encodeURIComponent(o.occurredAt)}`;
        return h(
          'div',
          { dataset: { occurrence: o.id } },
          nav,
          h(
            'dl.facts.occurrence-facts',
            fact('Time', fmtDate(o.occurredAt)),
            fact('Level', levelBadge(o.level)),
            fact(
              'Environment',
              o.environment ? h('span', { id: 'occ-env', dir: 'auto' }, o.environment) : h('span.hint', 'none sent'),
            ),
            fact(
              'User',
              o.userId ? h('span', { id: 'occ-user', dir: 'auto' }, o.userId) : h('span.hint', 'no user id'),
            ),
            fact('App version', o.appVersion),
            fact('Device', [o.brand, o.model].filter(Boolean).join(' ') || null),
            fact('Session', h('a', { href: sessionLink }, h('span.mono', o.sessionId.slice(0, 8)), ' at the crash →')),
          ),
          droppedBlock(o.dropped),
          h('h3', 'Tags'),
          tagChips(projectId, o.tags),
          h('h3', 'Context'),
          o.context
            ? h('pre.context-json', { tabindex: '0', dir: 'ltr' }, shownJson(o.context, 2))
            : h('p.hint', 'No context.'),
          h('h3', 'Before the crash'),
          h(
            'p.hint',
            'Breadcrumbs the SDK sent and the events flightrec stored for the session, in time order (UTC); ' +
              'the crash last.',
          ),
          timelineBlock(r.timeline),
          h('h3', 'Source'),
          sourceBlock(r.source),
        );
      },
      'Loading the occurrence…',
    );
  show(0);
  return box;
}

/** The page's environment filter: the group's environments with their occurrences. */
export function environmentPicker(g, onPick) {
  const envs = g.environments ?? [];
  if (envs.length <= 1 && !g.environment) return null;
  const pick = (e) => onPick(e.target.value === '*' ? undefined : e.target.value);
  const sel = h(
    'select',
    { id: 'crash-env', onchange: pick },

    h('option', { value: '*', selected: g.environment === null }, 'all environments'),
    envs.map((e) =>
      h(
        'option',
        { value: e.environment, selected: g.environment === e.environment },
        `${e.environment || '(none)'} · ${fmtCount(e.occurrences)}`,
      ),
    ),
  );
  return h('div.filters.env-filter', h('div', h('label', { for: 'crash-env' }, 'Environment'), sel));
}
