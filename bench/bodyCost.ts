/**
 * `npx tsx bench/bodyCost.ts`: the request thread's CPU for an ingest body at the edge — the JSON
 * parser with its scans (src/http/sanitize.ts) and the route's schema (src/http/validation.ts) —
 * for each SDK-shaped body of bench/traffic.ts, through Fastify's `inject` on one thread with no
 * store behind it: what a request costs before the spool, apart from the cores' contention that
 * makes the saturated benches noisy. Prints µs of process CPU per request (best of the rounds),
 * and the pieces timed alone on the same bodies: JSON.parse, the array pre-scan the parser runs
 * only past 128 KB now (`topLevelArrayExceeds`), the route's schema with the service's ajv, and the
 * UUID checks inside it (ajv-formats' expression against `UUID_PATTERN`, the format now).
 *
 * Env: BENCH_BODY_REQUESTS (per kind and round, default 3000), BENCH_BODY_ROUNDS (default 5).
 */
import Fastify from 'fastify';
import * as S from '../src/http/schemas/ingest.ts';
import { registerJsonParser, type BodyArrayLimit } from '../src/http/sanitize.ts';
import { bodyAjv, registerValidation } from '../src/http/validation.ts';
import { UUID_PATTERN } from '../src/domain/ids.ts';
import { topLevelArrayExceeds } from '../src/lib/jsonScan.ts';
import { Client, Ids } from './traffic.ts';

const N = Number(process.env.BENCH_BODY_REQUESTS ?? 3000);
const ROUNDS = Number(process.env.BENCH_BODY_ROUNDS ?? 5);

const app = Fastify({ bodyLimit: 5 * 1024 * 1024 });
registerValidation(app);
registerJsonParser(app);
const routes = [
  { url: '/ingest/events', body: S.eventsBody, bodyArray: { key: 'events', max: S.MAX_EVENTS } },
  { url: '/ingest/network', body: S.networkBody, bodyArray: { key: 'requests', max: S.MAX_REQUESTS } },
];
for (const r of routes)
  app.post(
    r.url,
    { config: { bodyArray: r.bodyArray } satisfies BodyArrayLimit, schema: { body: r.body } },
    async (_req, reply) => reply.code(201).send({ ok: true }),
  );
await app.ready();

// Distinct bodies, as a load generator's: each one's ids differ, so no string is parsed twice.
const client = new Client(new Ids(), 1_000_000);
client.sessionStart();
const kinds = {
  events100: () => client.events('events100'),
  events500: () => client.events('events500'),
  network200: () => client.network(),
};

/** µs of this process's CPU that `f` took, per body. */
async function perBody(f: () => Promise<void> | void): Promise<number> {
  const before = process.cpuUsage();
  await f();
  const d = process.cpuUsage(before);
  return (d.user + d.system) / N;
}

// ajv-formats' own `uuid` (the format the schemas used before `isUuid`).
const AJV_FORMATS_UUID = /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;
const ajv = bodyAjv();
const validators = { '/ingest/events': ajv.compile(S.eventsBody), '/ingest/network': ajv.compile(S.networkBody) };
const ID = /"(?:sessionId|id)":"([^"]+)"/g;

console.log(`flightrec body cost — ${N} requests per kind and round, best of ${ROUNDS}; Node ${process.version}`);
console.log(
  'µs per body     bytes   edge (inject)  JSON.parse  array pre-scan  schema  UUIDs: ajv-formats  UUID_PATTERN',
);
for (const [kind, make] of Object.entries(kinds)) {
  const bodies = Array.from({ length: N }, () => make());
  const bytes = Math.round(bodies.reduce((n, b) => n + b.json.length, 0) / N);
  const buffers = bodies.map((b) => Buffer.from(b.json));
  const parsed = bodies.map((b) => JSON.parse(b.json) as unknown);
  const ids = bodies.map((b) => [...b.json.matchAll(ID)].map((m) => m[1] as string));
  const headers = { 'content-type': 'application/json' };
  const best = {
    edge: Infinity,
    parse: Infinity,
    scan: Infinity,
    schema: Infinity,
    regex: Infinity,
    pattern: Infinity,
  };
  const take = (k: keyof typeof best, us: number) => {
    best[k] = Math.min(best[k], us);
  };
  const key = kind === 'network200' ? 'requests' : 'events';
  const validate = validators[bodies[0]?.path as keyof typeof validators];
  let sink = 0;
  const countIds = (test: RegExp) => {
    for (const list of ids) for (const id of list) if (test.test(id)) sink++;
  };
  for (let r = 0; r < ROUNDS; r++) {
    take(
      'edge',
      await perBody(async () => {
        for (const b of bodies) {
          const res = await app.inject({ method: 'POST', url: b.path, headers, payload: b.json });
          if (res.statusCode !== 201) throw new Error(`${kind}: ${res.statusCode} ${res.body}`);
        }
      }),
    );
    take(
      'parse',
      await perBody(() => {
        for (const b of bodies) JSON.parse(b.json);
      }),
    );
    take(
      'scan',
      await perBody(() => {
        for (const b of buffers) if (topLevelArrayExceeds(b, key, 500)) sink++;
      }),
    );
    take(
      'schema',
      await perBody(() => {
        for (const p of parsed) if (!validate(p)) throw new Error(`${kind}: ${JSON.stringify(validate.errors)}`);
      }),
    );
    take('regex', await perBody(() => countIds(AJV_FORMATS_UUID)));
    take('pattern', await perBody(() => countIds(UUID_PATTERN)));
  }
  if (sink < 0) console.log(sink);
  const f = (v: number, w: number) => v.toFixed(1).padStart(w);
  console.log(
    `${kind.padEnd(12)} ${String(bytes).padStart(8)}   ${f(best.edge, 13)}  ${f(best.parse, 10)}  ${f(best.scan, 14)}  ${f(best.schema, 6)}  ${f(best.regex, 17)}  ${f(best.pattern, 12)}`,
  );
}
await app.close();
