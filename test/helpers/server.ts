import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createServer, type Server } from '../../src/server.ts';
import type { AppOptions } from '../../src/app.ts';
import type { InjectOptions } from 'fastify';
import { Writable } from 'node:stream';
import { waitFor } from './wait.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestServer extends Server {
  dataDir: string;
  env: Record<string, string>;
  /** Authorization header for the admin API. */
  admin: { authorization: string };
  createProject(name?: string): Promise<{ projectId: string; apiKey: string; auth: { authorization: string } }>;
  /** A webhook through the management API (throws unless 201): its id, url and signing secret. */
  createWebhook(
    projectId: string,
    body: { url: string; events?: string[] },
  ): Promise<{ id: string; url: string; secret: string }>;
  /** Listens on a free loopback port (for a browser or a child process) and answers its base URL. */
  listen(): Promise<string>;
  /**
   * Resolves once every event, request and crash report acknowledged so far is loaded from the
   * spools and visible to reads (a 201 means durable, not yet visible); throws past `timeoutMs`.
   * Without the spool (INGEST_SPOOL=false) everything is visible at its 201 and it resolves at once.
   */
  settled(timeoutMs?: number): Promise<void>;
  /** The stores once `settled()`: a test's direct reads see every write acknowledged so far. */
  stores(): Promise<Server['svc']['stores']>;
}

export interface TestServerOptions {
  /**
   * Default true: `app.inject` of anything but `/ingest/*` first awaits `settled()`, so a test
   * reads what it sent as a client would once the spool had loaded it (without it, a read right
   * after a 201 finds nothing yet). False for tests that hold the stores back on purpose (an
   * outage, a stalled insert) and read meanwhile; they await what they need themselves.
   */
  readAfterSettled?: boolean;
}

/**
 * A fresh DATA_DIR. Its embedded Postgres starts as a copy of the cluster test/globalSetup.ts
 * initialised once for the run, so a server skips initdb (PGlite opens a copied directory once,
 * as it does any existing one). Outside vitest, or with DATABASE_URL set, it starts empty.
 */
export function tempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-test-'));
  const template = process.env.VITEST ? inject('pgliteTemplate') : undefined;
  if (template) fs.cpSync(template, path.join(dir, 'postgres'), { recursive: true });
  return dir;
}

/**
 * A fresh DATA_DIR whose embedded stores are already migrated: a copy of the one test/globalSetup.ts
 * migrated once for the run (its ClickHouse only, with DATABASE_URL set). A server started on it
 * runs the migrator as at any restart and finds nothing to do. Outside vitest, `tempDataDir()`.
 */
export function migratedDataDir(): string {
  const template = process.env.VITEST ? inject('migratedTemplate') : undefined;
  if (!template) return tempDataDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-test-'));
  const parts = process.env.DATABASE_URL ? ['clickhouse'] : ['postgres', 'clickhouse'];
  // The engine links each table's name to its data by a relative symbolic link, kept as written.
  for (const part of parts)
    fs.cpSync(path.join(template, part), path.join(dir, part), { recursive: true, verbatimSymlinks: true });
  return dir;
}

/**
 * A real service on the real stores: embedded by default, or the machine's Postgres and Redis
 * when DATABASE_URL / REDIS_URL are set in the environment (as .ci/run does).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  dataDir = migratedDataDir(),
  appOptions: AppOptions = { logger: false },
  { readAfterSettled = true }: TestServerOptions = {},
): Promise<TestServer> {
  const fullEnv: Record<string, string> = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    RUN_WORKER: 'false',
    // The default ingest path, as in production: bodies and crash reports are spooled and loaded
    // a moment after their 201 (see `settled()` and `readAfterSettled`). Tests of the synchronous
    // path set INGEST_SPOOL=false themselves.
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...(process.env.SECRETS_KEY ? { SECRETS_KEY: process.env.SECRETS_KEY } : {}),
    ...(process.env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: process.env.CLICKHOUSE_URL } : {}),
    // Each test server counts its limits in its own Redis namespace: test files run in parallel
    // from one IP, and the per-IP auth limit would otherwise be shared between them.
    ...(process.env.REDIS_URL
      ? { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: `flightrec-test-${randomBytes(6).toString('hex')}` }
      : {}),
    ...env,
  };
  const server = await createServer(loadConfig(fullEnv), appOptions);
  // The limiter never waits on Redis: a request before its client connects is counted in process.
  // On the machine's Redis (.ci/run's second pass), tests count from a connected client; a test
  // that passes a Redis of its own (down, behind a proxy) sees it as the server does.
  const redis = server.svc.stores.redis;
  if (redis && process.env.REDIS_URL && fullEnv.REDIS_URL === process.env.REDIS_URL) {
    await waitFor('the Redis client connected', () => redis.client.status === 'ready', 30_000);
  }
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const settled = async (timeoutMs = 30_000) => {
    // Each spool answers for what it acknowledged; all must have loaded it. The crash loader
    // appends facts (a session's first fatal crash), so the facts spool is asked after it.
    const crashes = (await server.svc.crashPipeline?.settled(timeoutMs)) ?? true;
    const facts = (await server.svc.factsSpool?.settled(timeoutMs)) ?? true;
    const bodies = (await server.svc.spool?.settled(timeoutMs)) ?? true;
    if (!crashes || !facts || !bodies)
      throw new Error(`the spools had not loaded what they acknowledged after ${timeoutMs} ms`);
  };
  if (readAfterSettled) {
    const inject = server.app.inject.bind(server.app);
    // Only the promise form (`inject(opts)`) waits; the chain and callback forms pass through.
    server.app.inject = ((opts?: InjectOptions | string, ...rest: unknown[]) => {
      if (opts === undefined || rest.length > 0) return (inject as (...a: unknown[]) => unknown)(opts, ...rest);
      const url = typeof opts === 'string' ? opts : String(opts.url ?? opts.path ?? '');
      if (url.startsWith('/ingest/')) return inject(opts);
      return settled().then(() => inject(opts));
    }) as typeof server.app.inject;
  }
  return {
    ...server,
    dataDir,
    env: fullEnv,
    admin,
    async createProject(name = 'test project') {
      const r = await server.app.inject({ method: 'POST', url: '/api/projects', headers: admin, payload: { name } });
      if (r.statusCode !== 201) throw new Error(`project create failed: ${r.statusCode} ${r.body}`);
      const body = r.json();
      return { projectId: body.project.id, apiKey: body.apiKey, auth: { authorization: `Bearer ${body.apiKey}` } };
    },
    async createWebhook(projectId: string, body: { url: string; events?: string[] }) {
      const r = await server.app.inject({
        method: 'POST',
        url: `/api/projects/${projectId}/webhooks`,
        headers: admin,
        payload: body,
      });
      if (r.statusCode !== 201) throw new Error(`webhook create failed: ${r.statusCode} ${r.body}`);
      return r.json();
    },
    async listen() {
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const addr = server.app.server.address();
      return `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    },
    settled,
    async stores() {
      await settled();
      return server.svc.stores;
    },
  };
}

/** A log destination that keeps every line a test server writes, for tests that read its log. */
export function logCapture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, stream };
}
