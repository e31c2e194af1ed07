import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createServer, type Server } from '../../src/server.ts';
import type { AppOptions } from '../../src/app.ts';
import { Writable } from 'node:stream';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestServer extends Server {
  dataDir: string;
  env: Record<string, string>;
  /** Authorization header for the admin API. */
  admin: { authorization: string };
  createProject(name?: string): Promise<{ projectId: string; apiKey: string; auth: { authorization: string } }>;
  /** Listens on a free loopback port (for a browser or a child process) and answers its base URL. */
  listen(): Promise<string>;
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
 * A real service on the real stores: embedded by default, or the machine's Postgres and Redis
 * when DATABASE_URL / REDIS_URL are set in the environment (as .ci/run does).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  dataDir = tempDataDir(),
  appOptions: AppOptions = { logger: false },
): Promise<TestServer> {
  const fullEnv: Record<string, string> = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    RUN_WORKER: 'false',
    // Tests read their writes right after the 201: the synchronous ingest path. The spool's own
    // tests (test/ingest/spool.test.ts) turn it on.
    INGEST_SPOOL: 'false',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...(process.env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: process.env.CLICKHOUSE_URL } : {}),
    // Each test server counts its limits in its own Redis namespace: test files run in parallel
    // from one IP, and the per-IP auth limit would otherwise be shared between them.
    ...(process.env.REDIS_URL
      ? { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: `flightrec-test-${randomBytes(6).toString('hex')}` }
      : {}),
    ...env,
  };
  const server = await createServer(loadConfig(fullEnv), appOptions);
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
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
    async listen() {
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const addr = server.app.server.address();
      return `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
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
