import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../services/index.ts';
import { loggableError } from '../../lib/log.ts';
import { metricsAuth } from '../auth.ts';

const status = { type: 'object', properties: { status: { type: 'string' }, error: { type: 'string' } } } as const;

/**
 * Liveness apart from readiness: `/health/live` says the process serves HTTP (an orchestrator
 * restarts it when this fails), `/health/ready` that its stores answer (a balancer sends it
 * traffic only then); restarting a process because Postgres is down would not bring Postgres
 * back. `/health` stays what it always was, readiness, for the probes and scripts that use it.
 * None of them, nor `/metrics`, is logged per request: probes would drown the log.
 */
export const healthRoutes =
  (svc: Services): FastifyPluginAsync =>
  async (app) => {
    const ready = async (_req: unknown, reply: import('fastify').FastifyReply) => {
      try {
        // With the spools, ClickHouse away is ridden through while every one has room: the
        // replica stays in its balancer (a Kubernetes readiness probe) and keeps acknowledging.
        // One full (crash reports, session facts) answers 503 on its route: not ready then.
        const spools = [svc.spool, svc.factsSpool, svc.crashPipeline?.spool];
        const ch = svc.stores.ch.ping().catch((err: unknown) => {
          if (!svc.spool || !spools.every((s) => !s || s.hasRoom())) throw err;
        });
        await Promise.all([svc.stores.pg.query('SELECT 1'), ch]);
        return { status: 'ok' };
      } catch (err) {
        app.log.warn({ err: loggableError(err) }, 'readiness check failed');
        return reply.code(503).send({ status: 'unavailable', error: 'A store did not answer' });
      }
    };
    const quiet = { logLevel: 'silent' as const };
    app.get(
      '/health',
      {
        ...quiet,
        schema: {
          tags: ['health'],
          description: 'Readiness (same as /health/ready)',
          response: { 200: status, 503: status },
        },
      },
      ready,
    );
    app.get(
      '/health/ready',
      {
        ...quiet,
        schema: {
          tags: ['health'],
          description:
            'Readiness: 200 when Postgres and ClickHouse answer (or, ClickHouse away, the ingest spool has room), else 503',
          response: { 200: status, 503: status },
        },
      },
      ready,
    );
    app.get(
      '/health/live',
      {
        ...quiet,
        schema: {
          tags: ['health'],
          description: 'Liveness: 200 while the process serves HTTP; touches no store',
          response: { 200: status },
        },
      },
      async () => ({ status: 'ok' }),
    );
    app.get(
      '/metrics',
      { ...quiet, schema: { hide: true }, onRequest: metricsAuth(svc.config.metricsToken) },
      async (_req, reply) => {
        const r = svc.metrics.registry;
        return reply.type(r.contentType).send(await r.metrics());
      },
    );
  };
