import { h, badge, errorBox, fmtCount, fmtDate, fmtDuration, fmtTime, loading, withLoading } from '../lib/dom.js';
import { dash, get, qs } from '../lib/api.js';
import { statusBadge } from '../lib/widgets.js';

const PAGE = 500;

/** Time since the session's start: to the millisecond within a minute, then in minutes and hours. */
function offset(ts, start) {
  const ms = new Date(ts).getTime() - new Date(start).getTime();
  if (Number.isNaN(ms)) return '—';
  const abs = Math.abs(ms);
  return `${ms >= 0 ? '+' : '−'}${abs < 60_000 ? `${(abs / 1000).toFixed(3)} s` : fmtDuration(abs)}`;
}

function describe(e) {
  const d = e.data ?? {};
  switch (e.type) {
    case 'navigate':
      return [h('strong', d.to ?? '?'), d.from ? h('span.hint', ` from ${d.from}`) : h('span.hint', ' (first screen)')];
    case 'tap':
      return [h('strong', d.target ?? 'tap'), d.x != null && d.y != null ? h('span.hint', ` at ${d.x}, ${d.y}`) : null];
    case 'custom':
      return [
        h('strong', d.name ?? 'event'),
        d.properties && Object.keys(d.properties).length ? h('code.props', JSON.stringify(d.properties)) : null,
      ];
    case 'network':
      return [
        h('strong', `${d.method ?? ''} `),
        h('span.url', d.url ?? ''),
        ' ',
        e.failed
          ? badge(d.error ? `failed: ${d.error}` : String(d.statusCode), 'bad')
          : badge(String(d.statusCode ?? '—'), 'ok'),
        d.duration != null ? h('span.hint', ` ${fmtDuration(d.duration)}`) : null,
      ];
    default:
      return [JSON.stringify(d)];
  }
}

function eventItem(e, start) {
  // The server's verdict (isNetworkError, src/domain/sessionState.ts): the browser keeps no copy of the rule.
  const failed = e.type === 'network' && e.failed === true;
  return h(
    `li.tl.tl-${e.type}${failed ? '.tl-failed' : ''}`,
    { dataset: { seq: e.sequenceNumber } },
    h('span.tl-time', offset(e.timestamp, start)),
    h('span.tl-type', e.type),
    h('span.tl-body', describe(e)),
    h('span.tl-seq.hint', `#${e.sequenceNumber}`),
  );
}

function crashItem(c, projectId, start, target) {
  // The crash a person came from (the crash page's "open session") is marked and scrolled to.
  const isTarget = target !== null && new Date(c.occurredAt).getTime() === target;
  return h(
    `li.tl.tl-crash${isTarget ? '.tl-target' : ''}`,
    {
      role: 'note',
      id: isTarget ? 'crash-target' : undefined,
      tabindex: isTarget ? '-1' : undefined,
      'aria-current': isTarget ? 'true' : undefined,
    },
    h('span.tl-time', offset(c.occurredAt, start)),
    h('span.tl-type', c.isFatal ? 'crash' : 'error'),
    h(
      'span.tl-body',
      h('strong', c.message ?? 'Crash'),
      ' ',
      c.groupStatus ? h('span.hint', `(${c.groupStatus}) `) : null,
      c.groupId ? h('a', { href: `#/p/${projectId}/crashes/${c.groupId}` }, 'Open crash group →') : null,
    ),
  );
}

/**
 * Events in sequence order, with each crash placed before the first event that came after it.
 * target: the time (ms) of a crash to scroll to; more events load until it is placed.
 */
function timeline(projectId, session, crashes, target) {
  const list = h('ol.timeline', { 'aria-label': 'Timeline' });
  const more = h('div');
  const events = [];
  let nextAfter;

  const render = (done) => {
    const items = [];
    const pending = [...crashes];
    for (const e of events) {
      while (pending.length && new Date(pending[0].occurredAt) < new Date(e.timestamp))
        items.push(crashItem(pending.shift(), projectId, session.startedAt, target));
      items.push(eventItem(e, session.startedAt));
    }
    // Crashes after the last loaded event are shown only once no later events remain to load.
    if (done) for (const c of pending) items.push(crashItem(c, projectId, session.startedAt, target));
    list.replaceChildren(...items);
    if (!items.length) list.replaceChildren(h('li.empty', 'No events recorded for this session.'));
  };

  let rounds = 0;
  const load = async () => {
    more.replaceChildren(loading('Loading events…'));
    try {
      const r = await get(
        dash(`/projects/${projectId}/sessions/${session.id}/events${qs({ after: nextAfter, limit: PAGE })}`),
      );
      events.push(...r.data);
      nextAfter = r.nextAfter;
      render(nextAfter === null);
      more.replaceChildren(
        nextAfter === null
          ? ''
          : h('button', { type: 'button', onclick: load }, `Load more events (after #${nextAfter})`),
      );
      const found = list.querySelector('#crash-target');
      if (found) {
        found.scrollIntoView({ block: 'center' });
        found.focus({ preventScroll: true });
      } else if (target !== null && nextAfter !== null && ++rounds < 20) {
        // the crash lies further on: keep loading (bounded) until it is on the page
        await load();
      }
    } catch (err) {
      more.replaceChildren(errorBox(err, load));
    }
  };
  load();
  return h('div', list, more);
}

function networkLog(projectId, sessionId) {
  const box = h('div');
  const show = (page) =>
    withLoading(
      box,
      async () => {
        const r = await get(dash(`/projects/${projectId}/sessions/${sessionId}/network${qs({ page, limit: 100 })}`));
        if (!r.total) return h('p.empty', 'No network requests recorded.');
        return h(
          'div',
          h(
            'div.table-wrap',
            h(
              'table.network.stack-sm',
              h(
                'thead',
                h(
                  'tr',
                  ['Time (UTC)', 'Method', 'URL', 'Status', 'Duration', 'Size'].map((c) =>
                    h('th', { scope: 'col' }, c),
                  ),
                ),
              ),
              h(
                'tbody',
                r.data.map((n) =>
                  h(
                    `tr${n.failed ? '.failed' : ''}`,
                    h('td', { 'data-label': 'Time (UTC)' }, fmtTime(n.timestamp)),
                    h('td', { 'data-label': 'Method' }, n.method ?? '—'),
                    h('td.url', { 'data-label': 'URL' }, n.url ?? '—'),
                    h(
                      'td',
                      { 'data-label': 'Status' },
                      n.failed
                        ? badge(n.error ? `failed: ${n.error}` : String(n.statusCode), 'bad')
                        : String(n.statusCode ?? '—'),
                    ),
                    h('td.num', { 'data-label': 'Duration' }, fmtDuration(n.duration)),
                    h(
                      'td.num',
                      { 'data-label': 'Size' },
                      n.responseSize == null ? '—' : `${fmtCount(n.responseSize)} B`,
                    ),
                  ),
                ),
              ),
            ),
          ),
          r.pages > 1
            ? h(
                'nav.pager',
                { 'aria-label': 'Network log pages' },
                h('button', { type: 'button', disabled: r.page <= 1, onclick: () => show(r.page - 1) }, '← Previous'),
                h('span', `Page ${r.page} of ${r.pages}`),
                h('button', { type: 'button', disabled: r.page >= r.pages, onclick: () => show(r.page + 1) }, 'Next →'),
              )
            : null,
        );
      },
      'Loading network log…',
    );
  show(1);
  return box;
}

export function sessionView(projectId, sessionId, params = {}) {
  const target = params.crash ? new Date(params.crash).getTime() : NaN;
  const root = h('section');
  root.append(h('p', h('a', { href: `#/p/${projectId}/sessions` }, '← Sessions')));
  const body = h('div');
  root.append(body);
  withLoading(
    body,
    async () => {
      const { session: x, crashes } = await get(dash(`/projects/${projectId}/sessions/${sessionId}`));
      const fact = (k, v) => [h('dt', k), h('dd', v === null || v === undefined || v === '' ? '—' : v)];
      return h(
        'div',
        h(
          'h1',
          'Session ',
          h('span.mono', x.id.slice(0, 8)),
          ' ',
          statusBadge(x.status),
          x.hasNetworkErrors ? badge('⚠ network errors', 'warn') : null,
        ),
        h(
          'dl.facts',
          fact('Started', fmtDate(x.startedAt)),
          fact('Ended', x.endedAt ? fmtDate(x.endedAt) : 'still active'),
          fact('Duration', fmtDuration(x.duration)),
          fact('Events', fmtCount(x.eventCount)),
          fact('Platform', [x.platform, x.osVersion].filter(Boolean).join(' ')),
          fact('Device', [x.brand, x.model].filter(Boolean).join(' ')),
          fact('App version', [x.appVersion, x.appBuildNumber && `(${x.appBuildNumber})`].filter(Boolean).join(' ')),
          fact('Network', x.networkType),
          fact('Locale', x.locale),
          fact('User', x.userId),
          fact('Session id', h('code', x.id)),
        ),
        h('h2', 'Timeline'),
        h('p.hint', 'Times on the timeline are from the session’s start; absolute times are UTC.'),
        timeline(projectId, x, crashes, Number.isNaN(target) ? null : target),
        h('h2', 'Network log'),
        networkLog(projectId, x.id),
      );
    },
    'Loading session…',
  );
  return root;
}
