import { rateLimit } from '../rateLimit.ts';
import { HttpError } from '../errors.ts';
import { clearSessionCookie, csrfToken, originCheck, readCookie, sessionAuth, setSessionCookie } from '../sessionAuth.ts';
import { SESSION_COOKIE, csrfTokenFor } from '../../services/accounts.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';

const credentials = {
  type: 'object',
  required: ['email', 'password'],
  properties: {
    email: { type: 'string', format: 'email', maxLength: 320 },
    // scrypt's cost grows with the input; 1 KiB is far beyond any passphrase
    password: { type: 'string', maxLength: 1024 },
  },
} as const;

const tags = ['auth'];

/** /api/auth: sign-up, log-in, log-out, current user. 20 requests per minute per IP. */
export const authRoutes = (svc: Services): Routes => async (app) => {
  const { accounts } = svc;
  const publicUrl = svc.config.publicUrl;
  app.addHook('onRequest', rateLimit(svc.limits.auth, 'ip'));
  app.addHook('onRequest', originCheck(publicUrl));

  app.post('/signup', { schema: { tags, body: credentials } }, async (req, reply) => {
    if (!svc.config.signupEnabled) throw new HttpError(403, 'Sign-up is closed on this server');
    const r = await accounts.signup(req.body.email, req.body.password);
    if (!r) throw new HttpError(409, 'An account with this email already exists');
    setSessionCookie(req, reply, r.token, publicUrl);
    return reply.code(201).send({ user: r.user, teams: await accounts.repo.teamsOf(r.user.id), csrfToken: csrfTokenFor(r.token) });
  });

  app.post('/login', { schema: { tags, body: credentials } }, async (req, reply) => {
    const r = await accounts.login(req.body.email, req.body.password);
    if (!r.ok) throw r.reason === 'suspended' ? new HttpError(403, 'This account is suspended') : new HttpError(401, 'Invalid email or password');
    setSessionCookie(req, reply, r.token, publicUrl);
    return { user: r.user, teams: await accounts.repo.teamsOf(r.user.id), csrfToken: csrfTokenFor(r.token) };
  });

  app.post('/logout', { schema: { tags } }, async (req, reply) => {
    const token = readCookie(req, SESSION_COOKIE);
    // A stale or missing session still logs out; a live one must prove it is the page's own request.
    if (token && (await accounts.userBySession(token))) {
      req.sessionToken = token;
      await csrfToken(req);
      await accounts.logout(token);
    }
    clearSessionCookie(req, reply, publicUrl);
    return { ok: true };
  });

  app.get('/me', { schema: { tags }, onRequest: sessionAuth(accounts) }, async (req) => ({
    user: req.user,
    teams: await accounts.repo.teamsOf(req.user.id),
    csrfToken: csrfTokenFor(req.sessionToken),
  }));
};
