import { loggableError, type Log, silentLog } from '../lib/log.ts';

/**
 * A session's eventCount is read from ClickHouse at export time, so new events change an
 * exported field without any Postgres write. For incremental exports they must still move the
 * session's updatedAt. Writing it on every events batch would put a Postgres update on the
 * hottest path (one per batch, every few seconds per active session), so event batches only
 * mark their session here, and the marks are written together: one UPDATE per project at
 * most `intervalMs` after the first mark, so a session is stamped at most once per interval
 * and never later than one interval after its last batch. The stamp comes after the events
 * were committed, so a pull that sees the stamp also counts those events.
 *
 * Marks live in this process until written: a process killed in between loses them (the
 * session is re-exported at its next change, e.g. its end). docs/decisions.md says so.
 */
export class SessionTouches {
  private dirty = new Map<string, Set<string>>();
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly touch: (projectId: string, sessionIds: readonly string[]) => Promise<void>,
    private readonly intervalMs: number,
    /** Past this many marked sessions the batch is written at once (bounds memory). */
    private readonly maxPending = 50_000,
    private readonly log: Log = silentLog,
  ) {}

  mark(projectId: string, sessionId: string): void {
    let set = this.dirty.get(projectId);
    if (!set) {
      set = new Set();
      this.dirty.set(projectId, set);
    }
    if (set.has(sessionId)) return;
    set.add(sessionId);
    this.size++;
    if (this.size >= this.maxPending) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.intervalMs).unref();
  }

  /** Writes every mark so far; resolves when written (shutdown, tests). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.dirty;
    this.dirty = new Map();
    this.size = 0;
    this.running = this.running.then(async () => {
      for (const [projectId, ids] of batch) {
        const all = [...ids];
        for (let i = 0; i < all.length; i += 1000) {
          const part = all.slice(i, i + 1000);
          // A failed write keeps its marks for the next round rather than losing them.
          await this.touch(projectId, part).catch((err: unknown) => {
            this.log.warn(
              { err: loggableError(err), project: projectId, marks: part.length },
              'updatedAt stamps not written; kept for the next round',
            );
            for (const id of part) this.mark(projectId, id);
          });
        }
      }
    });
    return this.running;
  }
}
