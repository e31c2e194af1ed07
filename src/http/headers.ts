import type { FastifyInstance } from 'fastify';

/** Query parameters whose values are personal or secret: never written to a log line. */
const SECRET_PARAMS = /([?&](?:email|token|apikey|api_key|key|e|s)=)[^&#]*/gi;

/**
 * The URL as logged: the values of `email`, `token`, an API key put in the query by mistake
 * (`apiKey`, `api_key`, `key`) and the unsubscribe link's address and signature (`e`, `s`)
 * replaced, the rest kept for debugging.
 */
export function loggableUrl(url: string): string {
  // A project key anywhere in the URL (another parameter's value, a path) is cut to its visible start.
  return url.replace(SECRET_PARAMS, '$1[redacted]').replace(/(frk_[0-9A-Za-z]{4})[0-9A-Za-z]+/g, '$1[redacted]');
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
    if ((url.startsWith('/api/') || url.startsWith('/export/')) && !reply.hasHeader('cache-control'))
      reply.header('cache-control', 'no-store');
    return payload;
  });
}
