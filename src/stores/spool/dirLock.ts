import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Ownership of a spool directory without flock (Node has none): a lock file created with
 * O_EXCL holding the owner's pid, host and a random token, its mtime refreshed as a heartbeat.
 * A lock is stale, and its directory free to take over, when its heartbeat is older than
 * `staleMs`, or at once when it names this host and a pid that is not running (a kill -9 on
 * this machine), or this very pid with another token (a container's pid 1 restarted). Taking
 * over renames the stale lock away first: a rename succeeds for one process only, so two
 * successors never both replay a directory.
 */
export interface LockInfo {
  token: string;
  pid: number;
  host: string;
  at: number;
}

export const LOCK_FILE = 'owner.lock';

const STARTED_AT = Date.now() - process.uptime() * 1000;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export class DirLocks {
  readonly token = randomBytes(8).toString('hex');
  readonly host = os.hostname();
  private held = new Set<string>();

  constructor(private readonly staleMs: number) {}

  private info(): LockInfo {
    return { token: this.token, pid: process.pid, host: this.host, at: Date.now() };
  }

  private create(dir: string): boolean {
    try {
      const fd = fs.openSync(path.join(dir, LOCK_FILE), 'wx');
      fs.writeSync(fd, JSON.stringify(this.info()));
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      this.held.add(dir);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
  }

  /** Whether the lock of `dir` is free to take over (absent, or its owner is gone). */
  isStale(dir: string): boolean {
    const file = path.join(dir, LOCK_FILE);
    let stat: fs.Stats;
    let owner: Partial<LockInfo>;
    try {
      stat = fs.statSync(file);
      owner = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockInfo>;
    } catch (e) {
      // No lock (a takeover died between its rename and its create), or one half written.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true;
      return Date.now() - (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) > this.staleMs;
    }
    if (owner.token === this.token) return false;
    const age = Date.now() - stat.mtimeMs;
    if (owner.host === this.host && typeof owner.pid === 'number') {
      // This pid, another token: a lock from before this process started (a container's pid 1 again).
      if (owner.pid === process.pid) return (owner.at ?? 0) < STARTED_AT;
      // On this host the pid says it: a live owner keeps its directory through a long pause
      // (start-up, a stalled event loop); only a pid reused by another program waits far longer.
      return !alive(owner.pid) || age > 10 * this.staleMs;
    }
    return age > this.staleMs;
  }

  /** Takes `dir` (it must exist) if its lock is free; false if a live owner holds it or another process won. */
  tryTake(dir: string): boolean {
    if (this.held.has(dir)) return true;
    if (!this.isStale(dir)) return false;
    const file = path.join(dir, LOCK_FILE);
    const aside = `${file}.stale-${this.token}`;
    try {
      fs.renameSync(file, aside);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const took = this.create(dir);
    fs.rmSync(aside, { force: true });
    return took;
  }

  /** Creates `dir` already locked: it appears (an atomic rename) with its lock inside. */
  createLocked(dir: string): void {
    const tmp = path.join(path.dirname(dir), `.${path.basename(dir)}.${this.token}.tmp`);
    fs.mkdirSync(tmp, { recursive: true });
    if (!this.create(tmp)) throw new Error(`cannot lock ${tmp}`);
    this.held.delete(tmp);
    fs.renameSync(tmp, dir);
    this.held.add(dir);
  }

  /** The heartbeat: each held lock's mtime moves; a lock taken by another process is reported. */
  beat(): string[] {
    const lost: string[] = [];
    const now = new Date();
    for (const dir of this.held) {
      const file = path.join(dir, LOCK_FILE);
      try {
        if ((JSON.parse(fs.readFileSync(file, 'utf8')) as LockInfo).token !== this.token) throw new Error('taken');
        fs.utimesSync(file, now, now);
      } catch {
        lost.push(dir);
        this.held.delete(dir);
      }
    }
    return lost;
  }

  release(dir: string): void {
    if (!this.held.delete(dir)) return;
    fs.rmSync(path.join(dir, LOCK_FILE), { force: true });
  }

  holds(dir: string): boolean {
    return this.held.has(dir);
  }
}
