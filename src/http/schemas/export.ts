// JSON Schemas of the export routes: query-string validation and the OpenAPI document.
import { MAX_LIMIT, DEFAULT_LIMIT } from '../../domain/exportParams.ts';
import { SESSION_STATUSES } from '../../domain/sessionState.ts';
import { CRASH_GROUP_STATUSES } from '../../domain/crashGroupStatus.ts';
import { EVENT_TYPES } from '../../domain/eventRows.ts';

const str = { type: 'string' } as const;
const nStr = { type: ['string', 'null'] } as const;
const int = { type: 'integer' } as const;
const nInt = { type: ['integer', 'null'] } as const;
const bool = { type: 'boolean' } as const;
const iso = { type: 'string', format: 'date-time', description: 'ISO 8601, UTC, milliseconds' } as const;

const common = {
  page: {
    type: 'integer',
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    default: 1,
    description: '1-based page; a page past the end returns data [] with the true total',
  },
  limit: {
    type: 'integer',
    minimum: 1,
    default: DEFAULT_LIMIT,
    description: `rows per page; values above ${MAX_LIMIT} are clamped to ${MAX_LIMIT}`,
  },
  format: {
    type: 'string',
    enum: ['json', 'csv', 'ndjson', 'parquet'],
    description:
      'json (default; ndjson when stream=true), csv (file download), ndjson, or parquet (file download: typed columns, timestamps as UTC milliseconds)',
  },
  stream: {
    type: 'boolean',
    default: false,
    description: 'true: every matching row in one streamed response (csv, ndjson or one parquet file), no pagination',
  },
} as const;

const dateParam = (what: string) =>
  ({
    type: 'string',
    maxLength: 64,
    description: `ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z); ${what}`,
  }) as const;

const dates = {
  from: dateParam('inclusive'),
  to: dateParam('inclusive; a date-only value includes that whole UTC day'),
} as const;

const changes = {
  updatedSince: {
    type: 'string',
    maxLength: 64,
    description:
      'ISO 8601 date or date-time: only rows whose exported fields changed at or after it, ordered by (updatedAt, id); the answer carries nextCursor (envelope) and X-Next-Cursor (header). Rows changed in the last EXPORT_SYNC_LAG_MS are left for the next pull',
  },
  cursor: {
    type: 'string',
    maxLength: 200,
    description:
      'resume an incremental read after the nextCursor / X-Next-Cursor of the previous answer (instead of updatedSince; page must stay 1)',
  },
} as const;

export const sessionsQuery = { type: 'object', properties: { ...common, ...dates, ...changes } } as const;
export const crashesQuery = { type: 'object', properties: { ...common, ...changes } } as const;
export const networkQuery = { type: 'object', properties: { ...common, ...dates } } as const;
export const releasesQuery = {
  type: 'object',
  properties: {
    ...common,
    from: dateParam('inclusive, on the session start, to the hour; default: 14 days before to'),
    to: dateParam('inclusive; a date-only value includes that whole UTC day; default: now. At most 366 days'),
    platform: {
      type: 'string',
      maxLength: 50,
      description: 'only this platform (ios, android, …); the adoption shares are then of that platform',
    },
    environment: {
      type: 'string',
      maxLength: 64,
      description: 'only sessions started in this environment (sessions, users, crashes); adoption: every environment',
    },
  },
} as const;

export const crashOccurrencesQuery = {
  type: 'object',
  properties: {
    ...common,
    from: dateParam('inclusive, on occurredAt'),
    to: dateParam('inclusive, on occurredAt; a date-only value includes that whole UTC day'),
    groupId: {
      type: 'string',
      format: 'uuid',
      description: "only this crash group's occurrences (404: not the project's)",
    },
    environment: {
      type: 'string',
      maxLength: 64,
      description: 'only this environment ("" for occurrences sent without one)',
    },

    level: { type: 'string', maxLength: 64, description: 'comma-separated levels: fatal, error, warning, info' },
    updatedSince: {
      ...changes.updatedSince,
      description:
        'ISO 8601 date or date-time: only occurrences that arrived at or after it, in arrival order (an occurrence never changes: it is updated once, when it arrives); the answer carries nextCursor and X-Next-Cursor. Occurrences that arrived in the last EXPORT_SYNC_LAG_MS are left for the next pull',
    },
    cursor: changes.cursor,
  },
} as const;

export const eventsQuery = {
  type: 'object',
  required: ['sessionId'],
  properties: {
    ...common,
    sessionId: { type: 'string', format: 'uuid', description: 'the session whose events to export' },
  },
} as const;

export const sessionRow = {
  type: 'object',
  properties: {
    id: str,
    userId: nStr,
    status: { type: 'string', enum: [...SESSION_STATUSES] },
    platform: nStr,
    osVersion: nStr,
    appVersion: nStr,
    networkType: nStr,
    eventCount: int,
    hasCrash: bool,
    hasNetworkErrors: bool,
    duration: { ...nInt, description: 'ms; null while the session is active' },
    startedAt: iso,
    endedAt: { type: ['string', 'null'], format: 'date-time', description: 'null while active' },
    updatedAt: {
      ...iso,
      description:
        'when an exported field last changed (start, end, crash, network-error flag, new events), server clock',
    },
  },
} as const;

export const crashRow = {
  type: 'object',
  properties: {
    id: str,
    message: str,
    status: { type: 'string', enum: [...CRASH_GROUP_STATUSES] },
    isFatal: bool,
    handled: bool,
    occurrenceCount: int,
    affectedDevices: int,
    platform: nStr,
    appVersion: nStr,
    osVersion: nStr,
    firstSeenAt: iso,
    lastSeenAt: iso,
    updatedAt: {
      ...iso,
      description:
        'latest of creation, status or summary change, the recording of its latest occurrence, and its merge; server clock',
    },
    mergedInto: {
      ...nStr,
      description:
        "the id of the group this one was merged into: only on a merged group's last row, which only updatedSince/cursor return (drop the row); otherwise null",
    },
  },
} as const;

export const eventRow = {
  type: 'object',
  properties: {
    id: str,
    type: { type: 'string', enum: [...EVENT_TYPES] },
    timestamp: iso,
    sequenceNumber: int,
    data: {
      type: 'object',
      additionalProperties: true,
      description:
        'navigate {from, to}; custom {name, properties}; network {method, url, statusCode, duration, error}; tap {x, y, target}; absent values null',
    },
  },
} as const;

export const networkRow = {
  type: 'object',
  properties: {
    id: str,
    sessionId: str,
    method: str,
    url: str,
    statusCode: nInt,
    duration: { type: 'integer', description: 'ms' },
    error: nStr,
    timestamp: iso,
  },
} as const;

const pct = (what: string) =>
  ({
    type: ['number', 'null'],
    description: `${what}, a percentage with at most two decimals; null without sessions`,
  }) as const;

export const crashOccurrenceRow = {
  type: 'object',
  properties: {
    id: { ...str, description: "the occurrence's identity: SHA-256 of the report's contract fields" },
    groupId: { ...nStr, description: 'null only while the group of its first occurrence is being created' },
    sessionId: str,
    occurredAt: iso,
    level: { type: 'string', enum: ['fatal', 'error', 'warning', 'info'] },
    environment: { ...str, description: '"" when none was sent' },
    userId: { ...nStr, description: "the report's userId, else the session's" },
    message: str,
    stackTrace: str,
    symbolicatedStack: { ...nStr, description: "the stack as the release's artifacts read it when recorded" },
    isFatal: bool,
    handled: bool,
    platform: nStr,
    osVersion: nStr,
    appVersion: nStr,
    brand: nStr,
    model: nStr,
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    context: { type: ['object', 'null'], additionalProperties: true },
    breadcrumbs: { type: 'array', items: { type: 'object', additionalProperties: true } },
    dropped: {
      type: 'array',
      description: 'what the report sent that was not kept, and why',
      items: { type: 'object', properties: { field: str, reason: str } },
    },
  },
} as const;

export const releaseRow = {
  type: 'object',
  properties: {
    appVersion: { ...nStr, description: 'null: sessions that sent no appVersion' },
    platform: nStr,
    sessions: { ...int, description: 'sessions started in the range' },
    users: { ...int, description: 'distinct users (userId, else the device) of those sessions' },
    crashedSessions: { ...int, description: 'of those sessions, the ones with a fatal crash' },
    crashedUsers: int,
    crashFreeSessions: pct('share of sessions with no fatal crash'),
    crashFreeUsers: pct('share of users with no fatal crash'),
    adoption24h: pct("share of the project's sessions in the 24 h that end with the range (or now)"),
    adoption7d: pct("share of the project's sessions in the 7 days that end with the range (or now)"),
    newGroups: { ...int, description: 'crash groups first seen (on this platform) in this version, all time' },
    regressedGroups: {
      ...int,
      description: 'resolved crash groups an occurrence from this release reopened, all time',
    },
    firstSeenAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'the first session of the release (to the hour)',
    },
    lastSeenAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'the end of the hour of its last session',
    },
  },
} as const;

const envelope = (row: object) => ({
  type: 'object',
  properties: {
    data: { type: 'array', items: row },
    total: int,
    page: int,
    limit: int,
    pages: int,
    nextCursor: {
      type: 'string',
      description: 'with updatedSince or cursor: pass as cursor to resume after the last row of this answer',
    },
  },
});

const text = (description: string) => ({ schema: { type: 'string', description } });

/** 200: the JSON envelope, or a CSV / NDJSON body (paginated, or whole with stream=true). */
export const okResponse = (row: object) => ({
  description:
    'JSON envelope; CSV file (X-Total-Count, X-Page, X-Limit, X-Pages headers); NDJSON; or a Parquet file. Incremental reads add X-Next-Cursor',
  headers: {
    'X-Next-Cursor': {
      schema: { type: 'string' },
      description: 'with updatedSince or cursor: the cursor of the next pull',
    },
  },
  content: {
    'application/json': { schema: envelope(row) },
    'text/csv': text('RFC 4180, header row of the JSON field names'),
    'application/x-ndjson': text('one JSON object per line'),
    'application/vnd.apache.parquet': {
      schema: { type: 'string', format: 'binary', description: 'one Parquet file (zstd or snappy), typed columns' },
    },
  },
});
