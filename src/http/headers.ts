import type { FastifyInstance } from 'fastify';

/** Query parameters whose values are personal or secret: never written to a log line. */
const SECRET_PARAMS = /([?&](?:email|token)=)[^&#]*/gi;

/** The URL as logged: `email` and `token` values replaced, the rest kept for debugging. */
export function loggableUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

/**
 * Headers on every answer: `nosniff` everywhere (a JSON answer is never run as a script or
 * styled as HTML), and `Cache-Control: no-store` on the API and export answers, which carry
 * accounts' and projects' data a shared cache or the browser's disk must not keep.
 */
export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (req, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    const url = req.url;
    if ((url.startsWith('/api/') || url.startsWith('/export/')) && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
}
