import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.ts';

/**
 * While the service shuts down, a request arriving on a kept-alive connection gets the
 * contract's retryable 503 `{error}` with `Connection: close` (Fastify's own closing answer
 * has a different body), so the client retries on another process. Requests already being
 * handled are unaffected and finish.
 */
export function registerClosingGuard(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async () => {
    if (closing)
      throw new HttpError(503, 'Service is shutting down, retry shortly', undefined, {
        'retry-after': '1',
        connection: 'close',
      });
  });
}
