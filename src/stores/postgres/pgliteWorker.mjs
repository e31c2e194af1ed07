// The embedded Postgres engine, on a thread of its own (see pglite.ts: why, and the protocol).
// Plain JavaScript so that it starts with `node` alone, whatever loader the server runs under.
import v8 from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/**
 * On Node 24 (V8 13) the optimizing compile of PGlite's WebAssembly takes ~500 MB for a few
 * seconds after the engine opens: opening a cluster and running 10k queries peaks at 710 MB of
 * resident memory against 217 MB with the baseline compiler (Liftoff) alone (Node 20 peaks at
 * 225 MB either way). Those queries took the same time; a batch insert of 700 crash groups runs
 * about a quarter faster optimized (docs/decisions.md), which the memory budget does not allow.
 * The ~500 MB are mostly one compile's working memory: Postgres's parser (`raw_parser`) takes up
 * to 604 MB of V8 13's compile zone. Node 20 has no such compile, but a storm of new groups
 * optimizes enough code there to pass 700 MB. So WebAssembly stays on the baseline tier on every
 * Node (the flags are the process's). A V8 without them says so and goes on.
 */
v8.setFlagsFromString('--no-wasm-dynamic-tiering');
v8.setFlagsFromString('--no-wasm-tier-up');

const db = await PGlite.create(workerData.dir, {
  parsers: { 20: (v) => Number(v) },
  // The embedded store holds projects, keys, sessions and crash groups of one small install;
  // Postgres's default 128 MB of shared buffers would be ~90 MB of resident memory for nothing.
  postgresqlconf: ['shared_buffers=16MB'],
  // the crash list's search index (postgres/018): loaded only when a migration creates the extension
  extensions: { pg_trgm },
});

/** An error as data: structured clone keeps an Error's message, not Postgres's fields (code, constraint…). */
function plainError(err) {
  const e = err instanceof Error ? err : new Error(String(err));
  const fields = {};
  for (const [k, v] of Object.entries(e)) {
    if (k === 'query' || k === 'params') continue;
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) fields[k] = v;
  }
  return { name: e.name, message: e.message, stack: e.stack, fields };
}

// Messages are taken in the order they came: the caller's lock (pglite.ts) keeps a transaction's
// statements together, so this thread only runs them one after another.
let queue = Promise.resolve();
parentPort.on('message', (m) => {
  queue = queue.then(async () => {
    if (m.op === 'close') {
      await db.close();
      parentPort.postMessage({ id: m.id, rows: [], rowCount: 0 });
      return;
    }
    try {
      const r = await db.query(m.sql, m.params);
      parentPort.postMessage({ id: m.id, rows: r.rows, rowCount: r.affectedRows ?? r.rows.length });
    } catch (err) {
      parentPort.postMessage({ id: m.id, error: plainError(err) });
    }
  });
});
parentPort.postMessage({ ready: true });
