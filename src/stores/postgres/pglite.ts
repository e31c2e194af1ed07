import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Postgres, Queryable } from './port.ts';

/**
 * PGlite: real Postgres in WASM, single connection, run on a thread of its own (startEngine).
 * A query never runs inside another caller's transaction.
 */
export async function openPglite(dir: string): Promise<Postgres> {
  fs.mkdirSync(dir, { recursive: true });
  // initdb grows the engine's WebAssembly memory to ~850 MB, and WebAssembly memory never
  // shrinks: done in this process, it would stay this process's peak for good. A fresh directory
  // is therefore initialised by a short-lived process of its own; opened afterwards, the cluster
  // runs in ~300 MB (measured, docs/bench.md).
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    await promisify(execFile)(process.execPath, [fileURLToPath(new URL('./pgliteInitdb.mjs', import.meta.url)), dir]);
  }
  const engine = await startEngine(dir);
  const direct: Queryable = { query: (sql, params = []) => engine.run(sql, params) };
  return {
    kind: 'pglite',
    query: (sql, params) => engine.exclusive(() => direct.query(sql, params)),
    tx: (fn) =>
      engine.exclusive(async () => {
        await engine.run('BEGIN', []);
        let out: Awaited<ReturnType<typeof fn>>;
        try {
          out = await fn(direct);
        } catch (err) {
          await engine.run('ROLLBACK', []).catch(() => undefined);
          throw err;
        }
        await engine.run('COMMIT', []);
        return out;
      }),
    close: () => engine.exclusive(() => engine.stop()),
  };
}

type Reply =
  | { id: number; rows: unknown[]; rowCount: number; error?: undefined }
  | { id: number; error: { name: string; message: string; stack?: string; fields: Record<string, unknown> } };

const ERRORS: Record<string, ErrorConstructor> = { TypeError, RangeError, ReferenceError, SyntaxError, URIError };

/**
 * The engine's thread (pgliteWorker.mjs). PGlite runs every statement on the thread that calls it,
 * WebAssembly start to end: in the server's own thread, a storm of new crash groups spent half of
 * that thread in it (docs/bench.md), while requests waited. On its own thread the statements run
 * beside the requests. One connection still: `exclusive` lets one caller at a time in (a
 * transaction holds it from BEGIN to COMMIT), and the thread runs what it is sent in order.
 */
async function startEngine(dir: string) {
  const worker = new Worker(new URL('./pgliteWorker.mjs', import.meta.url), {
    workerData: { dir },
    // The thread's own objects are one statement's parameters and rows at a time.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  const waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  let next = 0;
  let gone: Error | undefined;
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
    worker.once('exit', (code) =>
      reject(new Error(`the embedded Postgres thread exited (${code}) while opening ${dir}`)),
    );
  });
  worker.removeAllListeners('error');
  worker.removeAllListeners('exit');
  // Idle, the thread does not keep the process alive; a statement in flight does.
  worker.unref();
  const fail = (e: Error) => {
    gone ??= e;
    for (const w of waiting.values()) w.reject(gone);
    waiting.clear();
  };
  worker.on('message', (r: Reply) => {
    const w = waiting.get(r.id);
    if (!w) return;
    waiting.delete(r.id);
    if (waiting.size === 0) worker.unref();
    w.resolve(r);
  });
  worker.on('error', (e) => fail(e));
  worker.on('exit', (code) => fail(new Error(`the embedded Postgres thread exited (${code})`)));

  const send = (m: { op?: 'close'; sql?: string; params?: readonly unknown[] }) =>
    new Promise<Reply>((resolve, reject) => {
      if (gone) return reject(gone);
      const id = next++;
      if (waiting.size === 0) worker.ref();
      waiting.set(id, { resolve, reject });
      worker.postMessage({ id, ...m });
    });
  let tail: Promise<unknown> = Promise.resolve();
  return {
    async run<T>(sql: string, params: readonly unknown[]): Promise<{ rows: T[]; rowCount: number }> {
      const r = await send({ sql, params });
      if (r.error) {
        const E = ERRORS[r.error.name] ?? Error;
        const e = Object.assign(new E(r.error.message), r.error.fields);
        if (r.error.stack) e.stack = r.error.stack;
        throw e;
      }
      return { rows: r.rows as T[], rowCount: r.rowCount };
    },
    exclusive<T>(fn: () => Promise<T>): Promise<T> {
      const run = tail.then(fn);
      tail = run.catch(() => undefined);
      return run;
    },
    async stop(): Promise<void> {
      if (gone) return;
      await send({ op: 'close' });
      gone = new Error('the embedded Postgres is closed');
      await worker.terminate();
    },
  };
}
