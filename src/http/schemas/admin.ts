import { KEY_SCOPES } from '../../domain/apiKey.ts';

/** A project's own packages, read as app frames by the crash group key (management API and dashboard). */
export const inAppPackagesSchema = {
  type: 'array',
  maxItems: 50,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 200, pattern: '^\\S+$' },
  description:
    "module or class prefixes the crash group key reads as the app's own frames (com.acme., @acme/, MyApp); [] for none",
} as const;

export const projectNameSchema = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;
export const keyNameSchema = { type: 'string', maxLength: 100 } as const;
/** Alert recipients of a project; null falls back to ALERT_EMAIL_TO. */
export const alertEmailsSchema = {
  type: ['array', 'null'],
  maxItems: 50,
  items: { type: 'string', format: 'email', maxLength: 320 },
} as const;

export const projectCreateBody = {
  type: 'object',
  required: ['name'],
  properties: { name: projectNameSchema },
} as const;

export const projectIdParams = {
  type: 'object',
  required: ['projectId'],
  properties: { projectId: { type: 'string', format: 'uuid' } },
} as const;

export const keyIdParams = {
  type: 'object',
  required: ['keyId'],
  properties: { keyId: { type: 'string', format: 'uuid' } },
} as const;

export const project = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    alertEmails: { type: ['array', 'null'], items: { type: 'string' } },
    createdAt: { type: 'string' },
    teamId: {
      type: ['string', 'null'],
      description: 'the team whose dashboard shows it; null for a project no team has yet',
    },
    allowedOrigins: {
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'browser origins that may send to /ingest; null: any origin',
    },
    inAppPackages: {
      type: 'array',
      items: { type: 'string' },
      description: "the project's own packages, read as app frames by crash grouping",
    },
  },
} as const;

export const keyInfo = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    createdAt: { type: 'string' },
    prefix: { type: ['string', 'null'], description: 'the start of the key (frk_ab12), to tell keys apart' },
    name: { type: ['string', 'null'] },
    scopes: {
      type: 'array',
      items: { type: 'string' },
      description: 'what the key may do: ingest, export and/or upload (symbolication artifacts)',
    },
    active: { type: 'boolean' },
  },
} as const;

/** `scopes`: `ingest`, `export`, `upload` (default ingest and export); an app should embed an ingest-only key, CI an upload-only one. */
const keyScopesSchema = {
  type: 'array',
  minItems: 1,
  maxItems: KEY_SCOPES.length,
  uniqueItems: true,
  items: { type: 'string', enum: [...KEY_SCOPES] },
} as const;

export const keyCreateBody = {
  type: ['object', 'null'],
  properties: { name: keyNameSchema, scopes: keyScopesSchema },
} as const;

/**
 * A change of a project: any of its name, alert recipients and team (by id, or as the team
 * owned by an account's email). At least one field.
 */
export const projectPatchBody = {
  type: 'object',
  minProperties: 1,
  properties: {
    name: projectNameSchema,
    alertEmails: alertEmailsSchema,
    teamId: { type: ['string', 'null'], format: 'uuid' },
    teamOwnerEmail: { type: 'string', format: 'email', maxLength: 320 },
    allowedOrigins: {
      type: ['array', 'null'],
      maxItems: 100,
      items: { type: 'string', minLength: 1, maxLength: 2048 },
      description:
        'browser origins (https://app.example.com) that may send to /ingest; null (the default): any origin; []: no browser page',
    },
    inAppPackages: inAppPackagesSchema,
  },
} as const;
