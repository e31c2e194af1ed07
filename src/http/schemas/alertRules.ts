import { RULE_KINDS } from '../../domain/alertRules.ts';
import { WEBHOOK_EVENTS } from '../../domain/webhooks.ts';

const uuid = { type: 'string', format: 'uuid' } as const;

export const projectParams = { type: 'object', required: ['projectId'], properties: { projectId: uuid } } as const;
export const ruleParams = {
  type: 'object',
  required: ['projectId', 'ruleId'],
  properties: { projectId: uuid, ruleId: uuid },
} as const;
export const webhookParams = {
  type: 'object',
  required: ['projectId', 'webhookId'],
  properties: { projectId: uuid, webhookId: uuid },
} as const;

const ruleFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  kind: {
    type: 'string',
    enum: [...RULE_KINDS],
    description:
      "spike: a group passes `threshold` occurrences in `windowMinutes`; crash_free: a release's crash-free sessions fall " +
      "below `threshold` % over `windowMinutes`; crash_free_regression: a release's crash-free sessions are significantly below " +
      "the previous release's (their 95 % Wilson intervals leave a gap wider than `threshold` points, default 0)",
  },
  threshold: { type: 'number', minimum: 0, maximum: 1e9 },
  windowMinutes: {
    type: 'integer',
    minimum: 1,
    maximum: 43_200,
    description: 'default 60 (spike) or 1440 (crash_free, crash_free_regression)',
  },
  minSessions: {
    type: 'integer',
    minimum: 1,
    maximum: 1e9,
    description:
      'crash_free, crash_free_regression: releases with fewer sessions in the window are not judged (default 50)',
  },
  cooldownMinutes: {
    type: 'integer',
    minimum: 0,
    maximum: 43_200,
    description: 'a group or release that fired does not fire again sooner (default 60)',
  },
  emails: {
    type: ['array', 'null'],
    maxItems: 50,
    items: { type: 'string', format: 'email', maxLength: 320 },
    description:
      "null: the project's alert recipients; []: no email. Addresses of non-members get alerts once confirmed",
  },
  webhookIds: { type: 'array', maxItems: 20, items: uuid },
  enabled: { type: 'boolean' },
  levels: {
    type: ['array', 'null'],
    minItems: 1,
    maxItems: 4,
    uniqueItems: true,
    items: { type: 'string', enum: ['fatal', 'error', 'warning', 'info'] },
    description: "spike: the crash levels counted; null (default): fatal and error. ['warning', 'info']: messages",
  },
} as const;

export const ruleCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'kind'],
  properties: ruleFields,
} as const;

export const rulePatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: ruleFields,
} as const;

export const rule = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    projectId: { type: 'string' },
    name: { type: 'string' },
    kind: { type: 'string' },
    threshold: { type: 'number' },
    windowMinutes: { type: 'integer' },
    minSessions: { type: 'integer' },
    cooldownMinutes: { type: 'integer' },
    emails: { type: ['array', 'null'], items: { type: 'string' } },
    webhookIds: { type: 'array', items: { type: 'string' } },
    enabled: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' },
    levels: { type: ['array', 'null'], items: { type: 'string' } },
  },
} as const;

const events = {
  type: 'array',
  maxItems: WEBHOOK_EVENTS.length,
  items: { type: 'string', enum: [...WEBHOOK_EVENTS] },
} as const;
const url = {
  type: 'string',
  minLength: 8,
  maxLength: 2048,
  description: "http(s); a https://hooks.slack.com/… URL gets Slack's {text} payload",
} as const;

export const webhookCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url,
    events: {
      ...events,
      description: 'project events besides the rules that name this webhook: crash_group.new, crash_group.regressed',
    },
  },
} as const;

export const webhookPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { url, events, enabled: { type: 'boolean' } },
} as const;

const webhookProps = {
  id: { type: 'string' },
  projectId: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'array', items: { type: 'string' } },
  enabled: { type: 'boolean' },
  createdAt: { type: 'string', format: 'date-time' },
} as const;

export const webhook = { type: 'object', properties: webhookProps } as const;

export const webhookCreated = {
  type: 'object',
  properties: {
    ...webhookProps,
    secret: { type: 'string', description: 'signs every delivery (X-Flightrec-Signature); shown only in this answer' },
  },
} as const;

export const deliveriesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { webhookId: uuid, limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
} as const;

export const delivery = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    webhookId: { type: 'string' },
    event: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'retrying', 'delivered', 'failed'] },
    attempts: { type: 'integer' },
    responseCode: { type: ['integer', 'null'] },
    latencyMs: { type: ['integer', 'null'] },
    error: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
    lastAttemptAt: { type: ['string', 'null'] },
    deliveredAt: { type: ['string', 'null'] },
  },
} as const;

export const listOf = <T extends object>(items: T) =>
  ({ type: 'object', properties: { items: { type: 'array', items } } }) as const;
