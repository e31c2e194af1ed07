import { h, errorBox, withLoading } from '../lib/dom.js';
import { api, dash, get } from '../lib/api.js';
import { state } from '../lib/router.js';

function teamCard(t, userId, rerender) {
  const owner = t.role === 'owner';
  const err = h('div');
  const email = h('input', { id: `add-${t.id}`, type: 'email', required: true, placeholder: 'teammate@example.com' });
  return h('article.card',
    h('header.card-head', h('h2', t.name), h('span.hint', owner ? 'you own this team' : `owner: ${t.ownerEmail}`),
      t.ownerSuspended ? h('span.badge.badge-warn', 'owner suspended: keys are off') : null),
    h('ul.members', t.members.map((m) => h('li',
      h('span', m.email), ' ', h('span.hint', m.role), m.userId === userId ? h('span.hint', ' (you)') : null,
      owner && m.role !== 'owner' ? h('button.link', {
        type: 'button', 'aria-label': `Remove ${m.email}`,
        onclick: async () => {
          try {
            await api('DELETE', dash(`/teams/${t.id}/members/${m.userId}`));
            rerender();
          } catch (x) {
            err.replaceChildren(errorBox(x));
          }
        },
      }, 'Remove') : null))),
    owner ? h('form.inline', {
      onsubmit: async (e) => {
        e.preventDefault();
        err.replaceChildren();
        try {
          await api('POST', dash(`/teams/${t.id}/members`), { email: email.value });
          rerender();
        } catch (x) {
          err.replaceChildren(errorBox(x));
        }
      },
    },
      h('label', { for: `add-${t.id}` }, 'Invite a member (they join once they accept)'),
      h('div.key-row', email, h('button', { type: 'submit' }, 'Invite'))) : null,
    err,
    h('p.hint', 'Members see and act on every project of the team; only the owner manages members.'),
  );
}

export function teamView() {
  const list = h('div');
  const rerender = () => withLoading(list, async () => {
    const { data } = await get(dash('/teams'));
    return h('div.cards', data.map((t) => teamCard(t, state.user.id, rerender)));
  }, 'Loading teams…');
  rerender();
  return h('section', h('h1', 'Teams'), list);
}
