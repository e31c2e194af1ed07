import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { dropDatabasesNamed } from '../scripts/databases.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PGlite data directory initialised once per run; each test server copies it. */
    pgliteTemplate: string | undefined;
    /**
     * A DATA_DIR whose embedded stores were migrated once per run (`postgres/` unless
     * DATABASE_URL is set, `clickhouse/`); `startTestServer`'s default data directory copies it.
     * Unset under a config without this setup (vitest.containers.config.ts).
     */
    migratedTemplate: string | undefined;
    /** With DATABASE_URL: the prefix of this run's per-file databases (test/helpers/isolatedDb.ts). */
    pgRunPrefix: string;
  }
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * PGlite's initdb is ~3.4 s of every test server's ~4 s boot, and gives the same cluster every
 * time: it runs once here, and test/helpers/server.ts copies the directory into each DATA_DIR
 * (a copy takes well under a second). With DATABASE_URL set the test servers use that Postgres,
 * so no cluster is prepared for them.
 *
 * The migrations were most of what was left (ClickHouse's ~1.2-1.7 s, Postgres's ~0.6 s, on the
 * bench machine; a test server starts ~100 times a run): they run once too, in a DATA_DIR that
 * `startTestServer` copies by default. Its start-up still runs the migrator, which finds every
 * step applied, as on any restart. Tests of migrations and of what a fresh DATA_DIR holds take
 * `tempDataDir()`, which migrates nothing.
 */
export default function setup(project: TestProject) {
  // One directory for the run, set as TMPDIR before the test processes start, so they inherit it
  // (test/setupTempDir.ts makes one per file inside it); removed when the run ends.
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-run-'));
  process.env.TMPDIR = runDir;
  const removeRunDir = () => fs.rmSync(runDir, { recursive: true, force: true });
  if (process.env.DATABASE_URL) {
    project.provide('pgliteTemplate', undefined);
    // Only its ClickHouse is copied; the PGlite beside it (initdb'd by the migration) serves nothing.
    const migrated = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-migrated-template-'));
    migrate(migrated);
    project.provide('migratedTemplate', migrated);
    // A file drops its database when it ends; one that never runs its hooks (every test skipped)
    // or dies cannot, so the run drops whatever of its own is left.
    const prefix = `flightrec_test_${randomBytes(4).toString('hex')}_`;
    project.provide('pgRunPrefix', prefix);
    return async () => {
      await dropDatabasesNamed(process.env.DATABASE_URL!, prefix);
      removeRunDir();
    };
  }
  project.provide('pgRunPrefix', 'flightrec_test_');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-pglite-template-'));
  // The server's own initdb script, in a process of its own as the server runs it (pglite.ts).
  execFileSync(process.execPath, [path.join(ROOT, 'src/stores/postgres/pgliteInitdb.mjs'), dir], { stdio: 'inherit' });
  project.provide('pgliteTemplate', dir);
  const migrated = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-migrated-template-'));
  fs.cpSync(dir, path.join(migrated, 'postgres'), { recursive: true });
  migrate(migrated);
  project.provide('migratedTemplate', migrated);
  return removeRunDir;
}

/** Migrates both embedded stores of `dataDir` in a process of its own (chDB binds one data directory per process). */
function migrate(dataDir: string): void {
  execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/helpers/migratedTemplate.ts'), dataDir], {
    stdio: 'inherit',
  });
}
