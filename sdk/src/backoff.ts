// Pacing after outages: how long the client's timer ticks leave a failing queue alone.
/**
 * How long timer ticks leave the queue alone after the nth retry cycle in a row ran out: the
 * next tick after the first, then doubling from the flush interval up to the contract's 60 s
 * cap, so a long outage is not met with four requests every few seconds. An explicit flush,
 * session end, crash report or shutdown always tries at once.
 */
export function outageBackoff(n: number, flushIntervalMs: number): number {
  return n <= 1 ? 0 : Math.min(60_000, flushIntervalMs * 2 ** (n - 2));
}
