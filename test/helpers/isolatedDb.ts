import { randomBytes } from 'node:crypto';
import { createDatabase, dropDatabase } from '../../scripts/databases.ts';

/**
 * With DATABASE_URL set, a fresh database for one test file: alert workers claim every due job
 * in their database, so two test files sharing one would take each other's jobs. Embedded
 * (no DATABASE_URL) each DATA_DIR is its own database already.
 */
export async function isolatedDatabase(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) return { env: {}, drop: async () => {} };
  const name = `flightrec_test_${randomBytes(6).toString('hex')}`;
  await createDatabase(base, name);
  const u = new URL(base);
  u.pathname = `/${name}`;
  return { env: { DATABASE_URL: u.toString() }, drop: () => dropDatabase(base, name) };
}
