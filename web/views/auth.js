import { h, errorBox } from '../lib/dom.js';
import { api } from '../lib/api.js';
import { navigate, signedIn } from '../lib/router.js';

/** `next`: the route the user wanted before signing in (app.js keeps it in the URL); they land there after. */
export function authView(mode, next = null) {
  const signup = mode === 'signup';
  const status = h('div', { 'aria-live': 'assertive' });
  const email = h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'email', required: true });
  const password = h('input', {
    id: 'password',
    name: 'password',
    type: 'password',
    required: true,
    autocomplete: signup ? 'new-password' : 'current-password',
    minlength: signup ? 10 : undefined,
  });
  const submit = h('button.primary', { type: 'submit' }, signup ? 'Create account' : 'Log in');
  const form = h(
    'form.auth',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        submit.disabled = true;
        submit.textContent = signup ? 'Creating…' : 'Logging in…';
        status.replaceChildren();
        try {
          signedIn(await api('POST', `/api/auth/${mode}`, { email: email.value, password: password.value }));
          navigate(next ?? '#/');
        } catch (err) {
          status.replaceChildren(errorBox(err));
          submit.disabled = false;
          submit.textContent = signup ? 'Create account' : 'Log in';
        }
      },
    },
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password', signup ? h('span.hint', ' (at least 10 characters)') : null),
    password,
    status,
    submit,
  );
  return h(
    'section.auth-card',
    h(
      'h1',
      h('img', { src: '/favicon.svg', alt: '', width: 28, height: 28 }),
      signup ? 'Create your flightrec account' : 'Log in to flightrec',
    ),
    form,
    h(
      'p',
      signup ? 'Already have an account? ' : 'New here? ',
      h(
        'a',
        { href: `${signup ? '#/login' : '#/signup'}${next ? `?next=${encodeURIComponent(next)}` : ''}` },
        signup ? 'Log in' : 'Create an account',
      ),
    ),
  );
}
