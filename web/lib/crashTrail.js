import { h, fmtCount, withLoading } from './dom.js';
import { dash, get, qs } from './api.js';
import { pct, plural } from './crashFormat.js';

// Common trails before the crash (docs/dashboard.md, "Suspects and the trail before the crash").
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
export function trailPanel(projectId, groupId) {
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
