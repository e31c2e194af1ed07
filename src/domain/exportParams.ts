import { DAY_MS } from '../lib/time.ts';
import { InvalidParameterError } from './errors.ts';

/** Pure rules of the export query parameters (docs/decisions.md, Export: "Pagination", "Dates"). */

/** The query string of every /export route, as its schema validates it. */
export interface ExportQuery {
  page?: number;
  limit?: number;
  format?: 'json' | 'csv' | 'ndjson' | 'parquet';
  stream?: boolean;
  from?: string;
  to?: string;
  sessionId?: string;
  /** Incremental reads (sessions, crashes, crash occurrences): the first pull's start, then the returned cursor. */
  updatedSince?: string;
  cursor?: string;
  /** Releases: one platform only. */
  platform?: string;
  /** Crash occurrences: one group, one environment, levels (comma-separated). */
  groupId?: string;
  environment?: string;
  level?: string;
}

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;

export interface Paging {
  page: number;
  limit: number;
  offset: number;
}

/** page and limit arrive validated as positive integers; limit above the maximum is clamped. */
export function paging(page = 1, limit = DEFAULT_LIMIT): Paging {
  const l = Math.min(limit, MAX_LIMIT);
  return { page, limit: l, offset: (page - 1) * l };
}

export { pageCount } from './paging.ts';

/** A date query parameter (from, to, updatedSince) that is not an ISO 8601 date. */
export class DateParamError extends InvalidParameterError {}

// YYYY-MM-DD, optionally THH:MM[:SS[.fraction]] and a zone (Z, +HH:MM, +HHMM, +HH). A zone
// whose "+" arrived unescaped in a query string reads as a space, so a space is taken as "+".
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+\- ]\d{2}(?::?\d{2})?)?)?$/;

export interface ParsedDate {
  ms: number;
  dateOnly: boolean;
}

/**
 * The one date parser of query parameters (export and dashboard): a real calendar date, so
 * 2026-02-30 is refused rather than rolled over into March. A date-time without a zone is UTC.
 */
export function parseIsoDate(name: string, text: string): ParsedDate {
  const m = ISO.exec(text);
  if (!m)
    throw new DateParamError(`${name} must be an ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z)`, name);
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h ?? 0),
    minute = Number(mi ?? 0),
    second = Number(s ?? 0);
  const millis = Number((frac ?? '').slice(0, 3).padEnd(3, '0'));
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, millis));
  date.setUTCFullYear(year);
  if (
    month < 1 ||
    month > 12 ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day
  ) {
    throw new DateParamError(`${name} is not a valid calendar date or time: "${text}"`, name);
  }
  let offsetMin = 0;
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2)),
      om = Number(digits.slice(2) || 0);
    if (oh > 23 || om > 59) throw new DateParamError(`${name} has an invalid UTC offset: "${text}"`, name);
    offsetMin = sign * (oh * 60 + om);
  }
  return { ms: date.getTime() - offsetMin * 60_000, dateOnly: h === undefined };
}

/**
 * The half-open interval [fromMs, toMsExclusive) of a from/to pair, in Unix ms. `from` is
 * inclusive; a date-time `to` is inclusive to the millisecond; a date-only `to` covers that
 * whole UTC day. A date-time without a zone is UTC.
 */
export function dateRange(
  from: string | undefined,
  to: string | undefined,
): { fromMs?: number; toMsExclusive?: number } {
  const f = from === undefined ? undefined : parseIsoDate('from', from);
  const t = to === undefined ? undefined : parseIsoDate('to', to);
  const fromMs = f?.ms;
  const toMsExclusive = t === undefined ? undefined : t.dateOnly ? t.ms + DAY_MS : t.ms + 1;
  if (fromMs !== undefined && toMsExclusive !== undefined && fromMs >= toMsExclusive) {
    throw new InvalidParameterError('from must not be after to', 'from');
  }
  return { fromMs, toMsExclusive };
}
