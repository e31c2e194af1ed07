import { afterAll } from 'vitest';
import { SHARED_SECRETS_KEY, isolatedDatabase } from './helpers/isolatedDb.ts';

// With DATABASE_URL (the second pass of .ci/run), every test file gets a database of its own for
// its whole run: the background sweeps (alert jobs, verification mails, retention) claim every due
// row of their database, so two files sharing one would take, and mail away, each other's work.
// DATABASE_URL is replaced for this file's process, so its servers, child processes and helpers
// all see the same one. Embedded (no DATABASE_URL) each DATA_DIR is its own database already.
if (process.env.DATABASE_URL) {
  const db = await isolatedDatabase();
  process.env.SECRETS_KEY ??= SHARED_SECRETS_KEY;
  process.env.DATABASE_URL = db.env.DATABASE_URL;
  afterAll(db.drop);
}
