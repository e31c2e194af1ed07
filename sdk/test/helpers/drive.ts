import { vi } from 'vitest';
import type { RetryInfo } from '../../src/index.ts';
import { until } from './faultServer.ts';

/** Fakes only what the SDK's waits use; I/O and real-time polling keep running. */
export function fakeClock(now = 1_767_225_600_000): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], now });
}

/** Collects the transport's retry notices, each made just before its wait starts. */
export function retryLog(): { log: RetryInfo[]; onRetry: (i: RetryInfo) => void } {
  const log: RetryInfo[] = [];
  return { log, onRetry: (i) => log.push(i) };
}

/**
 * Runs out the SDK's retry waits until `cond` holds: each time the SDK starts a wait, the clock
 * is moved by exactly that wait (never while a request is in flight), so arrival stamps on the
 * fault server show the schedule the SDK kept. Waits logged before index `from` are taken as
 * done. Returns the index of the next unhandled wait.
 */
export async function runRetriesUntil(cond: () => boolean, retries: RetryInfo[], from = 0): Promise<number> {
  let handled = from;
  for (;;) {
    await until(() => cond() || retries.length > handled, 'a retry wait or the condition', 10_000);
    if (cond()) return handled;
    await vi.advanceTimersByTimeAsync(retries[handled++]!.delayMs);
  }
}

/** Lets `p` run to completion under fake timers, running out retry waits as above. */
export async function settle<T>(p: Promise<T>, retries: RetryInfo[], from = 0): Promise<T> {
  let done = false;
  let value!: T;
  let failure: unknown;
  p.then(
    (v) => {
      done = true;
      value = v;
    },
    (e) => {
      done = true;
      failure = e ?? new Error('rejected');
    },
  );
  await runRetriesUntil(() => done, retries, from);
  if (failure) throw failure;
  return value;
}
