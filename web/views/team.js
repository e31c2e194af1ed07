import { h, errorBox, withLoading, fmtDate } from '../lib/dom.js';
import { api, dash, get } from '../lib/api.js';
import { state, refreshProjects } from '../lib/router.js';
import { updateTop } from '../lib/header.js';
import { renderVerifyBanner } from '../lib/verify.js';

// The Team page: the invitations waiting for the user (Accept / Decline), then each team with its
// members; an owner invites (and sees the invitation confirmed and listed as pending, with Revoke)
// and removes members.

/** What the last action of a card said, kept across the card's re-render. */
const notes = new Map();

function pendingList(t, rerender, err) {
  if (!t.invitations?.length) return h('p.hint', 'No pending invitations.');
  return h(
    'ul.invitations',
    { 'aria-label': `Pending invitations of ${t.name}` },
    t.invitations.map((i) =>
      h(
        'li',
        h('span', i.email),
        ' ',
        h('span.hint', 'invited ', fmtDate(i.createdAt), i.mailedAt ? ', email sent' : ', email queued'),
        ' ',
        h(
          'button.link',
          {
            type: 'button',
            'aria-label': `Revoke the invitation of ${i.email}`,
            onclick: async () => {
              try {
                await api('DELETE', dash(`/teams/${t.id}/invitations/${i.id}`));
                notes.set(t.id, `The invitation of ${i.email} is revoked.`);
                rerender();
              } catch (x) {
                err.replaceChildren(errorBox(x));
              }
            },
          },
          'Revoke',
        ),
      ),
    ),
  );
}

/**
 * Remove, then the owner's decision about the API keys the member made: revoked (apps using
 * them get 401) or kept working under the owner's name.
 */
function removeControl(t, m, rerender, err) {
  const box = h('span.remove');
  const remove = (keys) => async () => {
    try {
      const r = await api('DELETE', dash(`/teams/${t.id}/members/${m.userId}?keys=${keys}`));
      notes.set(
        t.id,
        keys === 'revoke'
          ? `${m.email} is removed from the team; ${r.keysRevoked} API key${r.keysRevoked === 1 ? '' : 's'} they made ${r.keysRevoked === 1 ? 'is' : 'are'} revoked.`
          : `${m.email} is removed from the team; the API keys they made are now yours.`,
      );
      rerender();
    } catch (x) {
      err.replaceChildren(errorBox(x));
    }
  };
  const ask = () =>
    box.replaceChildren(
      h('span.hint', 'Their API keys: '),
      h(
        'button.danger',
        { type: 'button', onclick: remove('revoke'), 'aria-label': `Remove ${m.email} and revoke their keys` },
        'Revoke them',
      ),
      h(
        'button',
        { type: 'button', onclick: remove('reassign'), 'aria-label': `Remove ${m.email} and keep their keys` },
        'Keep them (mine)',
      ),
      h('button.link', { type: 'button', onclick: () => box.replaceChildren(start) }, 'Cancel'),
    );
  const start = h('button.link', { type: 'button', 'aria-label': `Remove ${m.email}`, onclick: ask }, 'Remove');
  box.replaceChildren(start);
  return box;
}

function teamCard(t, userId, rerender) {
  const owner = t.role === 'owner';
  const err = h('div');
  const note = notes.get(t.id);
  const email = h('input', {
    id: `add-${t.id}`,
    type: 'email',
    required: true,
    placeholder: 'teammate@example.com',
    autocomplete: 'off',
  });
  return h(
    'article.card',
    { 'data-team': t.id },
    h(
      'header.card-head',
      h('h2', t.name),
      h('span.hint', owner ? 'you own this team' : `owner: ${t.ownerEmail}`),
      t.ownerSuspended ? h('span.badge.badge-warn', 'owner suspended: keys are off') : null,
    ),
    h('h3', 'Members'),
    h(
      'ul.members',
      t.members.map((m) =>
        h(
          'li',
          h('span', m.email),
          ' ',
          h('span.hint', m.role),
          m.userId === userId ? h('span.hint', ' (you)') : null,
          owner && m.role !== 'owner' ? removeControl(t, m, rerender, err) : null,
        ),
      ),
    ),
    owner ? [h('h3', 'Pending invitations'), pendingList(t, rerender, err)] : null,
    owner
      ? h(
          'form.inline',
          {
            onsubmit: async (e) => {
              e.preventDefault();
              err.replaceChildren();
              try {
                const r = await api('POST', dash(`/teams/${t.id}/members`), { email: email.value });
                notes.set(
                  t.id,
                  `Invitation sent to ${r.invitation.email}. They join once they accept it on their Team page, with this address verified.`,
                );
                rerender();
              } catch (x) {
                err.replaceChildren(errorBox(x));
              }
            },
          },
          h('label', { for: `add-${t.id}` }, 'Invite a member (they join once they accept)'),
          h('div.key-row', email, h('button', { type: 'submit' }, 'Invite')),
        )
      : null,
    note ? h('p.notice', { role: 'status' }, note) : null,
    err,
    h('p.hint', 'Members see and act on every project of the team; only the owner manages members.'),
  );
}

function invitationsForMe(list, verified, rerender) {
  if (!verified) {
    return h(
      'article.card.invites-mine',
      h('h2', 'Invitations for you'),
      h(
        'p',
        'Verify your email address to see and accept the invitations sent to it (the link is in your inbox; the banner above sends a new one).',
      ),
    );
  }
  if (!list.length) return null;
  const err = h('div');
  const answer = (i, accept) => async () => {
    try {
      const r = await api('POST', dash(`/invitations/${i.id}/${accept ? 'accept' : 'decline'}`), {});
      state.teams = r.teams;
      if (accept) {
        notes.set(i.teamId, `You joined ${i.teamName}.`);
        await refreshProjects();
        updateTop();
      }
      rerender();
    } catch (x) {
      err.replaceChildren(errorBox(x));
    }
  };
  return h(
    'article.card.invites-mine',
    h('h2', 'Invitations for you'),
    h(
      'ul.invitations',
      list.map((i) =>
        h(
          'li',
          h('span', h('strong', i.teamName), h('span.hint', ` invited by ${i.invitedBy}`)),
          ' ',
          h(
            'span.invite-actions',
            h(
              'button.primary',
              { type: 'button', onclick: answer(i, true), 'aria-label': `Accept the invitation to ${i.teamName}` },
              'Accept',
            ),
            h(
              'button',
              { type: 'button', onclick: answer(i, false), 'aria-label': `Decline the invitation to ${i.teamName}` },
              'Decline',
            ),
          ),
        ),
      ),
    ),
    err,
  );
}

export function teamView() {
  const list = h('div');
  const rerender = () =>
    withLoading(
      list,
      async () => {
        const [{ data }, mine] = await Promise.all([get(dash('/teams')), get(dash('/invitations'))]);
        if (mine.emailVerified && state.verification && !state.verification.verified) {
          // Verified in another tab (the emailed link): the banner goes.
          state.verification = { ...state.verification, verified: true };
          renderVerifyBanner(document.getElementById('notice'));
        }
        return h(
          'div.cards',
          invitationsForMe(mine.data, mine.emailVerified, rerender),
          data.map((t) => teamCard(t, state.user.id, rerender)),
        );
      },
      'Loading teams…',
    );
  rerender();
  return h('section', h('h1', 'Teams'), list);
}
