import { h, errorBox, fmtDate } from './dom.js';
import { api } from './api.js';
import { state } from './router.js';

/**
 * The banner of an account whose address is not verified yet: what is held back until it is,
 * where the link went, and a button for a new one. Empty once verified.
 */
export function renderVerifyBanner(el) {
  const v = state.verification;
  if (!state.user || !v || v.verified) {
    el.hidden = true;
    el.replaceChildren();
    return;
  }
  const status = h('span', { role: 'status', 'aria-live': 'polite' });
  const resend = h(
    'button',
    {
      type: 'button',
      id: 'resend-verification',
      onclick: async () => {
        resend.disabled = true;
        status.replaceChildren();
        try {
          const r = await api('POST', '/api/auth/verification', {});
          state.verification = r.verification;
          status.replaceChildren('A new link is on its way. Check your inbox.');
        } catch (err) {
          status.replaceChildren(errorBox(err));
        } finally {
          resend.disabled = false;
        }
      },
    },
    'Send a new link',
  );
  el.hidden = false;
  el.replaceChildren(
    h(
      'div.banner.banner-warn',
      h(
        'p',
        h('strong', 'Verify your email address. '),
        ...(v.mailedAt
          ? [`We sent a link to ${state.user.email} (`, fmtDate(v.mailedAt), '). ']
          : [`A link to ${state.user.email} is on its way. `]),
        'Until you open it you cannot accept team invitations, and crash alerts are not sent to you.',
      ),
      h('div.banner-actions', resend, status),
    ),
  );
}
