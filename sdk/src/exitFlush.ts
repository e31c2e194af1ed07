// Node: the last attempt to send when the process is ending (`beforeExit`) or told to (a
// signal), bounded in time. Optional: given to a client with the Node hooks (node.ts).
import type { BatchQueue } from './batcher.js';
import type { Lanes } from './lanes.js';
import type { Store } from './store.js';

/** What the exit flush needs of its client. */
export interface ExitHost {
  readonly queue: BatchQueue;
  readonly lanes: Lanes;
  readonly store: Store;
  /** Shut down or shutting down: nothing to do. */
  closed(): boolean;
  /** No open session and no crash waiting for one. */
  quiet(): boolean;
  /** Ends the session (and sends crashes waiting for one): everything is then sealed and queued. */
  endAll(): void;
  /** The most the attempt may take (`exitFlushTimeoutMs`). */
  readonly boundMs: number;
}

export type ExitFlush = (why: 'beforeExit' | 'signal') => Promise<void>;

/**
 * The session is ended and everything queued gets one last attempt (a retry wait under way
 * ends at once), for at most `boundMs`; what is still unsent then stays queued (and persisted).
 * On `beforeExit` nothing is tried twice without progress, or a service that is down would keep
 * the process alive for ever.
 */
export function exitFlusher(host: ExitHost): ExitFlush {
  let mark = '';
  return (why) => {
    const { lanes, queue } = host;
    if (host.closed()) return Promise.resolve();
    if (why === 'beforeExit' && host.quiet() && queue.length === 0) return Promise.resolve();
    const last = lanes.last;
    last.abort();
    // An app that goes on living (its own signal handler, new work from `beforeExit`) gets
    // its retries back.
    const over = () => {
      if (lanes.last === last) lanes.last = new AbortController();
    };
    host.endAll();
    if (why === 'beforeExit') {
      const now = `${lanes.sentBatches}/${queue.length}/${queue.items}/${lanes.rejected}`;
      if (now === mark) {
        over();
        return Promise.resolve();
      }
      mark = now;
    }
    const done = lanes.send(true).then(() => host.store.persisting);
    // An attempt in flight (a service that hangs) is cut at the bound; its batch stays queued.
    const t = setTimeout(() => {
      lanes.paused = true;
      lanes.cancel();
    }, host.boundMs);
    void done.finally(() => {
      clearTimeout(t);
      over();
    });
    return done;
  };
}
