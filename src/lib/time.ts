/** Instants as the API shows them: ISO 8601 UTC with milliseconds. */

/** The time in Unix ms, passed in where a decision depends on it, so a test can move it by hand. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

export const DAY_MS = 86_400_000;

/** The UTC day of an instant, 'YYYY-MM-DD': how day buckets are keyed in both stores and the API. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The start (00:00 UTC) of the UTC day of an instant, in Unix ms. */
export const utcDayStart = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/** The UTC days 'YYYY-MM-DD' of [fromMs, toMs), the first from fromMs's day on. */
export function utcDaysOf(fromMs: number, toMs: number): string[] {
  const out: string[] = [];
  for (let t = utcDayStart(fromMs); t < toMs; t += DAY_MS) out.push(utcDay(t));
  return out;
}

/** Unix milliseconds (how ingestion stores client times) to ISO. */
export function isoMs(ms: number): string;
export function isoMs(ms: number | null | undefined): string | null;
export function isoMs(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/** A Postgres timestamp (a Date from `pg`, a string from some drivers) to ISO. */
export function isoTime(t: Date | string): string;
export function isoTime(t: Date | string | null): string | null;
export function isoTime(t: Date | string | null): string | null {
  return t === null ? null : new Date(t).toISOString();
}
