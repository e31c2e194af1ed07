import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createDatabase, dropDatabase } from '../../scripts/databases.ts';

// The server DATABASE_URL named when the run began: a file's own database is made beside it,
// even in a worker process that ran another file before (vitest may reuse one).
process.env.FLIGHTREC_TEST_SERVER_DATABASE_URL ??= process.env.DATABASE_URL;
const base = process.env.FLIGHTREC_TEST_SERVER_DATABASE_URL;

/** With DATABASE_URL set, a fresh database on the same server; test/setupDatabase.ts gives each file one. */
export async function isolatedDatabase(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (!base) return { env: {}, drop: async () => {} };
  const name = `${inject('pgRunPrefix')}${randomBytes(6).toString('hex')}`;
  await createDatabase(base, name);
  const u = new URL(base);
  u.pathname = `/${name}`;
  return { env: { DATABASE_URL: u.toString() }, drop: () => dropDatabase(base, name) };
}

/**
 * The server key of test processes that share one Postgres server, as a deployment's must share
 * one (each DATA_DIR would otherwise generate its own, and the second process refuses to start).
 */
export const SHARED_SECRETS_KEY = 'flightrec-test-secrets-key-0123456789abcdef';
