import { h, fmtCount, withLoading } from './dom.js';
import { dash, get } from './api.js';
import { pct, plural } from './crashFormat.js';

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
const times = (x) => `×${x >= 10 ? x.toFixed(0) : x.toFixed(1)}`;

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
export function suspectsPanel(projectId, groupId) {
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
