import fs from 'node:fs';
import path from 'node:path';
import { DirLocks, LOCK_FILE, type LockInfo } from './spool/dirLock.ts';

/** A lock older than this (no heartbeat) is another host's dead process, on a shared volume. */
const STALE_MS = 30_000;

/** DATA_DIR is held by a live flightrec process: this one must not open anything in it. */
export class DataDirInUseError extends Error {}

export interface DataDirLock {
  release(): void;
}

/**
 * One lock on DATA_DIR, taken before any embedded store opens (docs/decisions.md, "One lock on
 * DATA_DIR"). PGlite has no lock of its own: a second process that opened it beside a live one,
 * then a crash of the first, left a cluster that no longer starts. The lock is a file created
 * with O_EXCL naming its owner (src/stores/spool/dirLock.ts), its mtime refreshed as a heartbeat;
 * the owner's death on this host frees it at once, elsewhere after STALE_MS without a beat.
 */
export function lockDataDir(dir: string): DataDirLock {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const locks = new DirLocks(STALE_MS);
  if (!locks.tryTake(dir)) {
    let owner = '';
    try {
      const o = JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as Partial<LockInfo>;
      owner = ` (pid ${o.pid} on ${o.host})`;
    } catch {
      // half written by the process that holds it
    }
    throw new DataDirInUseError(
      `DATA_DIR ${dir} is in use by another flightrec process${owner}; stop it first, or give this process its own DATA_DIR`,
    );
  }
  const beat = setInterval(() => {
    if (locks.beat().length) console.error(`flightrec: the lock on DATA_DIR ${dir} was taken by another process`);
  }, STALE_MS / 6);
  beat.unref();
  return {
    release() {
      clearInterval(beat);
      locks.release(dir);
    },
  };
}

/** New files 0600 and directories 0700, in this process (a worker thread cannot set it; its process has). */
export function setOwnerOnlyUmask(): void {
  try {
    process.umask(0o077);
  } catch {
    // worker_threads: the umask is the process's
  }
}

/** Every file under `dir` made 0600 and every directory 0700 where group or others had access. */
export function tightenModes(dir: string): void {
  const stack = [dir];
  for (let d = stack.pop(); d !== undefined; d = stack.pop()) {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isSymbolicLink()) continue;
      const mode = fs.statSync(p).mode & 0o777;
      if (e.isDirectory()) stack.push(p);
      if (mode & 0o077) fs.chmodSync(p, e.isDirectory() ? 0o700 : mode & 0o700);
    }
  }
  const own = fs.statSync(dir).mode & 0o777;
  if (own & 0o077) fs.chmodSync(dir, 0o700);
}
