import { h, errorBox, fmtCount, withLoading } from './dom.js';
import { api, dash, get, qs } from './api.js';

/**
 * Merging by hand: other groups of the project, picked here, become part of this one (their
 * crashes count here from then on, their later crashes land here, and they leave the list).
 */
export function mergeBlock(projectId, g, onMerged) {
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
