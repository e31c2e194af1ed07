import type { FastifyPluginAsync } from 'fastify';
import { rateLimit } from '../rateLimit.ts';
import { SMALL_BODY_BYTES, acceptFormBodies, actionPage, resultPage } from '../actionPage.ts';
import type { Services } from '../../services/index.ts';

const token = { type: 'string', minLength: 16, maxLength: 64 } as const;
const unsubscribeFields = {
  type: 'object',
  required: ['p', 'e', 's'],
  properties: {
    p: { type: 'string', format: 'uuid' },
    e: { type: 'string', maxLength: 320 },
    s: { type: 'string', minLength: 16, maxLength: 64 },
  },
} as const;
type UnsubscribeFields = { p: string; e: string; s: string };

/**
 * /api/alert-recipients: the links of emails about alerts. Opening one (GET, HEAD) shows a page
 * with a button and changes nothing; the button's POST confirms or unsubscribes. The pages carry
 * no script and show the project's name only as escaped text.
 */
export const alertRecipientRoutes =
  (svc: Services): FastifyPluginAsync =>
  async (app) => {
    app.addHook('onRequest', rateLimit(svc.limits.auth, 'ip'));
    acceptFormBodies(app);
    // Anyone may call these: a token or a signed link's fields; a bigger body is a 413 before it is read.
    app.addHook('onRoute', (r) => {
      r.bodyLimit ??= SMALL_BODY_BYTES;
    });

    app.get<{ Querystring: { token: string } }>(
      '/confirm',
      {
        schema: {
          tags: ['alerts'],
          summary: 'The page of a confirmation link: a button that confirms the address (POST)',
          querystring: { type: 'object', required: ['token'], properties: { token } },
        },
      },
      async (req, reply) =>
        actionPage(reply, {
          title: 'Confirm crash alerts',
          text: 'Press the button to receive the crash alerts of the flightrec project this address was listed on.',
          action: '/api/alert-recipients/confirm',
          fields: { token: req.query.token },
          button: 'Confirm',
        }),
    );

    app.post<{ Body: { token: string } }>(
      '/confirm',
      {
        schema: {
          tags: ['alerts'],
          summary: 'Confirms an address of a project alert list (the token of the confirmation email)',
          body: { type: 'object', required: ['token'], properties: { token } },
        },
      },
      async (req, reply) => {
        const r = await svc.projects.confirmRecipient(req.body.token);
        if (!r)
          return resultPage(reply, req.headers.accept, 404, 'Link expired', 'Unknown or expired confirmation link');
        return resultPage(
          reply,
          req.headers.accept,
          200,
          'Confirmed',
          `Confirmed: ${r.email} will receive the crash alerts of the project "${r.projectName}".`,
        );
      },
    );

    app.get<{ Querystring: UnsubscribeFields }>(
      '/unsubscribe',
      {
        schema: {
          tags: ['alerts'],
          summary: "The page of an alert's unsubscribe link: a button (POST)",
          querystring: unsubscribeFields,
        },
      },
      async (req, reply) =>
        actionPage(reply, {
          title: 'Unsubscribe from crash alerts',
          text: `Press the button to stop the crash alerts of this flightrec project to ${req.query.e}.`,
          action: '/api/alert-recipients/unsubscribe',
          fields: { p: req.query.p, e: req.query.e, s: req.query.s },
          button: 'Unsubscribe',
        }),
    );

    // A mail client's one-click unsubscribe (RFC 8058) posts to the link itself, fields in the query.
    app.post<{ Body: Partial<UnsubscribeFields> | undefined; Querystring: Partial<UnsubscribeFields> }>(
      '/unsubscribe',
      {
        schema: {
          tags: ['alerts'],
          summary: "Stops a project's alerts to an address (the fields of the signed link, in the body or the query)",
        },
      },
      async (req, reply) => {
        const { p, e, s } = req.body && typeof req.body === 'object' && 'p' in req.body ? req.body : req.query;
        const valid =
          typeof p === 'string' &&
          /^[0-9a-f-]{36}$/i.test(p) &&
          typeof e === 'string' &&
          e.length <= 320 &&
          typeof s === 'string' &&
          s.length <= 64;
        const r = valid ? await svc.projects.unsubscribe(p.toLowerCase(), e, s) : null;
        if (!r)
          return resultPage(reply, req.headers.accept, 404, 'Link not valid', 'This unsubscribe link is not valid');
        return resultPage(
          reply,
          req.headers.accept,
          200,
          'Unsubscribed',
          `${e} will no longer receive the crash alerts of the project "${r.projectName}".`,
        );
      },
    );
  };
