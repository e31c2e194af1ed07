import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Services } from './services/index.ts';
import { frameworkErrors, registerErrorHandling } from './http/errors.ts';
import { registerValidation } from './http/validation.ts';
import { registerClosingGuard } from './http/closing.ts';
import { registerJsonParser } from './http/sanitize.ts';
import { loggableUrl, registerSecurityHeaders } from './http/headers.ts';
import { ingestRoutes } from './http/routes/ingest.ts';
import { ingestPreflight } from './http/cors.ts';
import { adminRoutes } from './http/routes/admin.ts';
import { healthRoutes } from './http/routes/health.ts';
import { crashGroupRoutes } from './http/routes/crashGroups.ts';
import { artifactApiRoutes } from './http/routes/artifacts.ts';
import { exportRoutes } from './http/routes/export.ts';
import { authRoutes } from './http/routes/auth.ts';
import { dashboardRoutes } from './http/routes/dashboard/index.ts';
import { operatorRoutes } from './http/routes/operator.ts';
import { webRoutes } from './http/routes/web.ts';
import { alertRecipientRoutes } from './http/routes/alertRecipients.ts';
import { registerEarlyNotFound } from './http/earlyNotFound.ts';
import { alertRuleRoutes } from './http/routes/alertRules.ts';
import { fingerprintRuleRoutes } from './http/routes/fingerprintRules.ts';

export interface AppOptions {
  logger?: boolean | object;
}

/** Without LOG_REQUESTS, a request slower than this still gets its line. */
const SLOW_REQUEST_MS = 1000;

// Header values that must never reach a log line.
const REDACT = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'];

/** The HTTP service: Fastify with its plugins; stores and services come in ready. */
export async function buildApp(svc: Services, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger:
      opts.logger === false
        ? false
        : {
            level: svc.config.logLevel,
            redact: REDACT,
            serializers: {
              req: (req: { method: string; url: string; host?: string; ip?: string }) => ({
                method: req.method,
                url: loggableUrl(req.url),
                host: req.host,
                remoteAddress: req.ip,
              }),
            },
            ...(typeof opts.logger === 'object' ? opts.logger : {}),
          },
    bodyLimit: svc.config.bodyLimitBytes,
    // Slow clients must not pin connections (issue 6): bound headers and the whole request.
    requestTimeout: svc.config.requestTimeoutMs,
    connectionTimeout: 60_000,
    keepAliveTimeout: 65_000,
    // A slow-loris client sending its headers a byte at a time is cut after HEADERS_TIMEOUT_MS
    // (10 s; checked every second, Node's default check interval is 30 s), however often it sends.
    http: { headersTimeout: svc.config.headersTimeoutMs, connectionsCheckingInterval: 1_000 },
    trustProxy: svc.config.trustProxy,
    // Answered by registerClosingGuard instead, with the contract's error body.
    return503OnClosing: false,
    frameworkErrors,
    // Two lines per request made megabytes of logs out of routine traffic; see the hook below.
    logController: new LogController({ disableRequestLogging: !svc.config.logRequests }),
  });
  registerValidation(app);
  registerErrorHandling(app);
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    // An ingest body's rows: events or requests of a batch, else one (a session, an end, a crash).
    let rows: number | undefined;
    if (route.startsWith('/ingest/')) {
      const b = req.body as { events?: unknown; requests?: unknown } | undefined;
      rows = Array.isArray(b?.events) ? b.events.length : Array.isArray(b?.requests) ? b.requests.length : 1;
    }
    svc.metrics.request(req.method, route, reply.statusCode, reply.elapsedTime / 1000, rows);
  });
  if (!svc.config.logRequests) {
    app.addHook('onResponse', async (req, reply) => {
      if (reply.statusCode >= 500 || reply.elapsedTime >= SLOW_REQUEST_MS) {
        req.log.info({ req, res: reply, responseTime: reply.elapsedTime }, 'request completed');
      }
    });
  }
  registerClosingGuard(app);
  registerEarlyNotFound(app);
  registerJsonParser(app);
  registerSecurityHeaders(app);
  // Bodies are JSON only: a text/plain body would otherwise reach the schemas as a string.
  app.removeContentTypeParser('text/plain');

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'flightrec',
        version: '0.1.0',
        description: 'Session telemetry: ingestion, export and management API',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'Project API key (frk_…)' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'Operator ADMIN_TOKEN' },
        },
      },
    },
  });
  // swagger-ui's policy (hashes of its inline script and style) without upgrade-insecure-requests,
  // which would send the page's own assets to https on a plain-http install.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    transformStaticCSP: (h: string) =>
      h.replace(/\s*upgrade-insecure-requests;?/, '').replace("frame-ancestors 'self'", "frame-ancestors 'none'"),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(healthRoutes(svc));
  await app.register(ingestPreflight(), { prefix: '/ingest' });
  await app.register(ingestRoutes(svc), { prefix: '/ingest' });
  await app.register(adminRoutes(svc), { prefix: '/api' });
  await app.register(crashGroupRoutes(svc), { prefix: '/api' });
  await app.register(artifactApiRoutes(svc), { prefix: '/api' });
  await app.register(alertRuleRoutes(svc), { prefix: '/api' });
  await app.register(fingerprintRuleRoutes(svc), { prefix: '/api' });
  await app.register(exportRoutes(svc), { prefix: '/export' });
  await app.register(authRoutes(svc), { prefix: '/api/auth' });
  await app.register(dashboardRoutes(svc), { prefix: '/api/dashboard' });
  await app.register(operatorRoutes(svc), { prefix: '/api' });
  await app.register(alertRecipientRoutes(svc), { prefix: '/api/alert-recipients' });
  await app.register(webRoutes());
  return app;
}
