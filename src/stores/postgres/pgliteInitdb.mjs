// Runs PGlite's initdb on a fresh data directory, in a process of its own (see pglite.ts).
// Plain JavaScript so that it starts with `node` alone, whatever loader the server runs under.
import { PGlite } from '@electric-sql/pglite';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node pgliteInitdb.mjs <dataDir>');
  process.exit(2);
}
const db = await PGlite.create(dir);
await db.close();
