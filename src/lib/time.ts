/** Instants as the API shows them: ISO 8601 UTC with milliseconds. */

/** The time in Unix ms, passed in where a decision depends on it, so a test can move it by hand. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

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
