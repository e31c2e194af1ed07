import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.ts';

/**
 * A request for no route is answered in onRequest, before its body is read: Fastify's own 404
 * route would first buffer and parse the body (5 MiB of JSON per request, a cheap way to fill
 * the memory of the process). The connection is closed when a body was announced, so the rest
 * of it is never read. Matched routes pay one boolean check; their own onRequest hooks (API key,
 * admin token, session) answer 401 before their bodies are read the same way.
 */
export function registerEarlyNotFound(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    // A NUL byte in a query value reaches Postgres as text it refuses (a 500); no parameter of
    // any route takes one, so the URL is refused at the edge.
    if (req.url.includes('%00'))
      return reply
        .code(400)
        .send(
          new HttpError(
            400,
            'The URL contains a NUL character (%00), which no parameter accepts',
            undefined,
            undefined,
            { code: 'invalid_parameter' },
          ).body(),
        );
    if (!req.is404) return;
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)
      reply.header('connection', 'close');
    return reply.code(404).send(new HttpError(404, `Route ${req.method} ${req.url.split('?')[0]} not found`).body());
  });
}
