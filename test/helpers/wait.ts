/** Polls until probe returns something truthy. */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A clock for code that takes one (src/lib/time.ts): it stands still until a test moves it,
 * so a lease or a backoff runs out at once instead of after a real wait. It starts at the real
 * time, so rows the database stamped a moment ago are already in its past.
 */
export function manualClock(start = Date.now()) {
  let now = start;
  const clock = () => now;
  clock.advance = (ms: number) => {
    now += ms;
  };
  return clock;
}
