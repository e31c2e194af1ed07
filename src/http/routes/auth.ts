import { rateLimit } from '../rateLimit.ts';
import { HttpError } from '../errors.ts';
import {
  clearSessionCookie,
  csrfToken,
  originCheck,
  readCookie,
  sessionAuth,
  setSessionCookie,
} from '../sessionAuth.ts';
import { SESSION_COOKIE, csrfTokenFor } from '../../services/accounts.ts';
import { SMALL_BODY_BYTES, acceptFormBodies, actionPage, resultPage } from '../actionPage.ts';
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
export const authRoutes =
  (svc: Services): Routes =>
  async (app) => {
    const { accounts } = svc;
    const publicUrl = svc.config.publicUrl;
    app.addHook('onRequest', rateLimit(svc.limits.auth, 'ip'));
    app.addHook('onRequest', originCheck(publicUrl));
    acceptFormBodies(app);
    // Anyone may call these: their bodies are a few fields, so one over 64 KiB is a 413 before it is read.
    app.addHook('onRoute', (r) => {
      r.bodyLimit ??= SMALL_BODY_BYTES;
    });
    // What the dashboard shows about the account: its teams, and whether its address is verified.
    const whoAmI = async (user: { id: string }, token: string) => ({
      user,
      teams: await accounts.repo.teamsOf(user.id),
      verification: await accounts.verification(user.id),
      csrfToken: csrfTokenFor(token),
    });

    app.post('/signup', { schema: { tags, body: credentials } }, async (req, reply) => {
      if (!svc.config.signupEnabled) throw new HttpError(403, 'Sign-up is closed on this server');
      const r = await accounts.signup(req.body.email, req.body.password);
      if (!r) throw new HttpError(409, 'An account with this email already exists');
      setSessionCookie(req, reply, r.token, publicUrl);
      return reply.code(201).send(await whoAmI(r.user, r.token));
    });

    app.post('/login', { schema: { tags, body: credentials } }, async (req, reply) => {
      const r = await accounts.login(req.body.email, req.body.password);
      if (!r.ok)
        throw r.reason === 'suspended'
          ? new HttpError(403, 'This account is suspended')
          : new HttpError(401, 'Invalid email or password');
      setSessionCookie(req, reply, r.token, publicUrl);
      return whoAmI(r.user, r.token);
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

    app.get('/me', { schema: { tags }, onRequest: sessionAuth(accounts) }, async (req) =>
      whoAmI(req.user, req.sessionToken),
    );

    // The link of the verification email: the page shows a button; only its POST verifies, so a
    // mail scanner that opens links verifies nothing.
    const verifyToken = { type: 'string', minLength: 16, maxLength: 64 } as const;
    app.get(
      '/verify',
      {
        schema: {
          tags,
          summary: 'The page of an email-verification link: a button that verifies (POST)',
          querystring: { type: 'object', required: ['token'], properties: { token: verifyToken } },
        },
      },
      async (req, reply) =>
        actionPage(reply, {
          title: 'Verify your email address',
          text: 'Press the button to verify the address of your flightrec account.',
          action: '/api/auth/verify',
          fields: { token: req.query.token },
          button: 'Verify my address',
        }),
    );

    app.post(
      '/verify',
      {
        schema: {
          tags,
          summary: 'Verifies the address whose link carried this token',
          body: { type: 'object', required: ['token'], properties: { token: verifyToken } },
        },
      },
      async (req, reply) => {
        const u = await accounts.verifyEmail(req.body.token);
        if (!u)
          return resultPage(
            reply,
            req.headers.accept,
            404,
            'Link expired',
            'Unknown or expired verification link: sign in and send a new one',
          );
        return resultPage(
          reply,
          req.headers.accept,
          200,
          'Address verified',
          `${u.email} is verified. You can close this page, or go back to flightrec.`,
        );
      },
    );

    app.post(
      '/verification',
      {
        schema: { tags, summary: 'Sends a new verification link to the signed-in account (at most one a minute)' },
        onRequest: sessionAuth(accounts),
      },
      async (req) => {
        await csrfToken(req);
        const r = await accounts.requestVerification(req.user.id);
        if (r === 'too-soon')
          throw new HttpError(
            429,
            'A link was sent less than a minute ago: check your inbox, or try again in a minute',
          );
        return { ok: true, verification: await accounts.verification(req.user.id) };
      },
    );
  };
