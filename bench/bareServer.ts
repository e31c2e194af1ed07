/**
 * Ceiling (a): Fastify on the same routes, with its default JSON body parser and the same body
 * limit, answering 201 without validating or storing anything. What HTTP + JSON parsing alone
 * cost on this machine. Prints its port on stdout once listening.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 5 * 1024 * 1024, keepAliveTimeout: 65_000 });
const ok = async (req: { body: unknown }, reply: { code(n: number): { send(b: unknown): unknown } }) => {
  const b = req.body as { events?: unknown[]; requests?: unknown[] };
  return reply.code(201).send({ ok: true, count: b.events?.length ?? b.requests?.length ?? 0 });
};
for (const p of ['/ingest/session', '/ingest/events', '/ingest/network', '/ingest/crash']) app.post(p, ok);
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
const addr = app.server.address();
console.log(JSON.stringify({ port: typeof addr === 'object' && addr ? addr.port : 0 }));
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
