import { loggableError, type Log, silentLog } from './log.ts';

/**
 * A long-lived part of a process (a store, a spool, a group commit, a worker): started once,
 * stopped once. `stop` finishes what the part holds (drains, flushes, waits for jobs in hand).
 */
export interface Part {
  name: string;
  start?(log: Log): void | Promise<void>;
  stop(): Promise<void> | void;
}

/**
 * The parts of one process in the order they start; they stop in the reverse order, so a part
 * stops before anything it writes into (the HTTP app before the spools, the spools before the
 * group commits they load through, those before the stores). Parts that stop side by side
 * (two spools, each within its own timeout) are one part whose `stop` awaits both.
 */
export class Lifecycle {
  private readonly parts: Part[] = [];
  private started = 0;
  private stopping: Promise<void> | undefined;

  constructor(private readonly log: Log = silentLog) {}

  /** Adds a part; added after `start`, it is started by the next `start` and stopped first. */
  add(part: Part): this {
    this.parts.push(part);
    return this;
  }

  /**
   * Starts the parts not yet started, in order; `logOf` gives each its logger. A part that fails
   * to start stops the ones already started and the error is thrown.
   */
  async start(logOf: (name: string) => Log = () => this.log): Promise<void> {
    if (this.stopping) throw new Error('lifecycle already stopped');
    while (this.started < this.parts.length) {
      const part = this.parts[this.started];
      if (!part) break;
      try {
        await part.start?.(logOf(part.name));
      } catch (err) {
        await this.stop().catch(() => undefined);
        throw err;
      }
      this.started++;
    }
  }

  /**
   * Stops every part, the last added first, also those never started (a store is open from the
   * moment it is added). A part whose stop fails is logged and the rest still stop (the stores
   * are closed, the data directory's lock released); the first failure is thrown at the end.
   * Idempotent: a second call answers the first one's promise.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      let first: unknown;
      for (const part of [...this.parts].reverse()) {
        try {
          await part.stop();
        } catch (err) {
          this.log.error({ err: loggableError(err), part: part.name }, 'stopping a part failed');
          first ??= err;
        }
      }
      if (first !== undefined) throw first;
    })();
    return this.stopping;
  }
}
