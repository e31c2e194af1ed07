import type { FastifyPluginAsync } from 'fastify';
import { rateLimit } from '../rateLimit.ts';
import { HttpError } from '../errors.ts';
import type { Services } from '../../services/index.ts';

/**
 * /api/alert-recipients/confirm?token=…: the link of a confirmation email. It answers plain
 * text, so nothing of the project's name can become markup in the page.
 */
export const alertRecipientRoutes = (svc: Services): FastifyPluginAsync => async (app) => {
  app.addHook('onRequest', rateLimit(svc.limits.auth, 'ip'));
  app.get<{ Querystring: { token: string } }>('/confirm', {
    schema: {
      tags: ['alerts'],
      summary: 'Confirms an address of a project alert list (the link of the confirmation email)',
      querystring: { type: 'object', required: ['token'], properties: { token: { type: 'string', minLength: 16, maxLength: 64 } } },
    },
  }, async (req, reply) => {
    const r = await svc.projects.confirmRecipient(req.query.token);
    if (!r) throw new HttpError(404, 'Unknown or expired confirmation link');
    reply.header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store');
    return `Confirmed: ${r.email} will receive the crash alerts of the project "${r.projectName}".\n`;
  });
};
