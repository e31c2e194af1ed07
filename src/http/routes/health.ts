import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../services/index.ts';
import { loggableError } from '../errors.ts';

export const healthRoutes = (svc: Services): FastifyPluginAsync => async (app) => {
  app.get('/health', {
    schema: {
      tags: ['health'],
      response: { 200: { type: 'object', properties: { status: { type: 'string' } } }, 503: { type: 'object', properties: { status: { type: 'string' }, error: { type: 'string' } } } },
    },
  }, async (req, reply) => {
    try {
      await Promise.all([svc.stores.pg.query('SELECT 1'), svc.stores.ch.ping()]);
      return { status: 'ok' };
    } catch (err) {
      req.log.warn({ err: loggableError(err) }, 'health check failed');
      return reply.code(503).send({ status: 'unavailable', error: 'A store did not answer' });
    }
  });
};
