// JSON Schemas of the ingestion bodies: the single source for validation and the OpenAPI doc.
// Unknown fields are ignored; timestamps are Unix ms within ClickHouse's DateTime64 range.
import { EVENT_TYPES } from '../../domain/eventRows.ts';

const uuid = { type: 'string', format: 'uuid' } as const;
export const unixMs = { type: 'integer', minimum: 0, maximum: 10_000_000_000_000 } as const;
const shortText = { type: 'string', maxLength: 1024 } as const;
const longText = { type: 'string', maxLength: 65_536 } as const;
const nullableText = { type: ['string', 'null'], maxLength: 8192 } as const;
const count = { type: 'integer', minimum: 0, maximum: 1e12 } as const;

export const MAX_EVENTS = 500;
export const MAX_REQUESTS = 200;

const device = {
  type: 'object',
  properties: {
    platform: { type: 'string', enum: ['ios', 'android', 'macos', 'linux', 'windows'] },
    osVersion: shortText,
    model: shortText,
    brand: shortText,
    appVersion: shortText,
    appBuildNumber: shortText,
    sdkVersion: shortText,
    locale: shortText,
    timezone: shortText,
    screenWidth: { type: 'integer', minimum: 0, maximum: 100_000 },
    screenHeight: { type: 'integer', minimum: 0, maximum: 100_000 },
    networkType: { type: 'string', enum: ['wifi', 'cellular', 'none', 'unknown'] },
  },
} as const;

export const sessionStartBody = {
  type: 'object',
  required: ['sessionId', 'device', 'startedAt'],
  properties: {
    sessionId: uuid,
    device,
    startedAt: unixMs,
    userId: shortText,
    // untyped: a bad value is dropped (the session is kept without one), never a 422
    environment: { description: 'e.g. production; at most 64 characters of A-Za-z0-9_.- (else ignored)' },
  },
} as const;

export const sessionEndBody = {
  type: 'object',
  required: ['sessionId', 'endedAt'],
  properties: { sessionId: uuid, endedAt: unixMs },
} as const;

const envelope = {
  type: { type: 'string', enum: [...EVENT_TYPES] },
  sessionId: uuid,
  timestamp: unixMs,
  sequenceNumber: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
} as const;

// The fields of one HTTP call, shared by network events and network requests.
const networkCall = {
  method: { type: 'string', maxLength: 32 },
  url: { type: 'string', maxLength: 16_384 },
  statusCode: { type: 'integer', minimum: 0, maximum: 999 },
  duration: count,
  error: nullableText,
} as const;

const event = {
  type: 'object',
  required: ['type', 'sessionId', 'timestamp', 'sequenceNumber'],
  properties: {
    ...envelope,
    from: nullableText,
    to: longText,
    ...networkCall,
    name: shortText,
    properties: { type: 'object' },
    x: { type: 'number' },
    y: { type: 'number' },
    target: longText,
  },
  // Each type's own required fields.
  allOf: [
    { if: { properties: { type: { const: 'navigate' } } }, then: { required: ['to'] } },
    { if: { properties: { type: { const: 'network' } } }, then: { required: ['method', 'url', 'duration'] } },
    { if: { properties: { type: { const: 'custom' } } }, then: { required: ['name'] } },
    { if: { properties: { type: { const: 'tap' } } }, then: { required: ['x', 'y'] } },
  ],
} as const;

export const eventsBody = {
  type: 'object',
  required: ['sessionId', 'events'],
  properties: {
    sessionId: uuid,
    events: { type: 'array', maxItems: MAX_EVENTS, items: event },
  },
} as const;

export const crashBody = {
  type: 'object',
  required: ['sessionId', 'message', 'stackTrace', 'isFatal', 'handled', 'timestamp'],
  properties: {
    sessionId: uuid,
    message: { type: 'string', maxLength: 8192 },
    stackTrace: { type: 'string', maxLength: 262_144 },
    isFatal: { type: 'boolean' },
    handled: { type: 'boolean' },
    timestamp: unixMs,
    // The crash context (src/domain/crashContext.ts): untyped here on purpose, since a bad or
    // oversized value is dropped with a reason and never fails the report (a 422 would lose it).
    environment: { description: 'e.g. production; at most 64 characters of A-Za-z0-9_.-' },
    userId: { description: "the user at the time of the report; overrides the session's" },
    tags: { description: 'object of string to string: at most 50, keys ≤ 32 characters, values ≤ 200' },
    context: { description: 'free-form object: at most 8 KiB as JSON, 5 levels deep' },
    breadcrumbs: {
      description: 'array of {timestamp (ms), category, message, level, data?}: the last 100, at most 32 KiB',
    },
    level: { description: 'fatal | error | warning | info (default: fatal when isFatal, else error)' },
    // Replaces the group key (1-10 strings of up to 200 characters, `{{default}}` for the default
    // key); read by the domain, which drops an invalid value rather than failing the report.
    fingerprint: {
      description:
        'strings that replace the group key; {{default}} stands for the default key; an invalid value is ignored',
    },
  },
} as const;

const networkRequest = {
  type: 'object',
  required: ['id', 'method', 'url', 'duration', 'timestamp'],
  properties: {
    id: uuid,
    ...networkCall,
    requestSize: count,
    responseSize: count,
    timestamp: unixMs,
  },
} as const;

export const networkBody = {
  type: 'object',
  required: ['sessionId', 'requests'],
  properties: {
    sessionId: uuid,
    requests: { type: 'array', maxItems: MAX_REQUESTS, items: networkRequest },
  },
} as const;

export const okResponse = {
  type: 'object',
  properties: { ok: { type: 'boolean' } },
} as const;

export const okCountResponse = {
  type: 'object',
  properties: { ok: { type: 'boolean' }, count: { type: 'integer' } },
} as const;

// `code` is the machine-readable cause (src/http/errors.ts); `field`, `keyword` and `params` name
// the one parameter a 400 is about; each detail of a 422 carries ajv's keyword and params too.
const ajvParams = { type: 'object', additionalProperties: true } as const;
export const errorResponse = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    code: { type: 'string' },
    field: { type: 'string' },
    keyword: { type: 'string' },
    params: ajvParams,
    details: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          message: { type: 'string' },
          keyword: { type: 'string' },
          params: ajvParams,
        },
      },
    },
  },
} as const;
