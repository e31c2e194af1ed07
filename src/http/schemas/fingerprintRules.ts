import {
  FINGERPRINT_RULE_FIELDS,
  MAX_FINGERPRINT_PART_LENGTH,
  MAX_FINGERPRINT_PARTS,
  MAX_PATTERN_LENGTH,
  MAX_RULES_PER_PROJECT,
} from '../../domain/fingerprintRules.ts';

const uuid = { type: 'string', format: 'uuid' } as const;

export const projectParams = { type: 'object', required: ['projectId'], properties: { projectId: uuid } } as const;
export const ruleParams = {
  type: 'object',
  required: ['projectId', 'ruleId'],
  properties: { projectId: uuid, ruleId: uuid },
} as const;

const pattern = { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH } as const;

const match = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: Object.fromEntries(FINGERPRINT_RULE_FIELDS.map((k) => [k, pattern])) as Record<
    (typeof FINGERPRINT_RULE_FIELDS)[number],
    typeof pattern
  >,
  description:
    'glob patterns (`*` is any run of characters, the rest literal, case-sensitive); every one given must match. ' +
    "type and message are the crash's; module and function must match one same frame",
} as const;

const fingerprint = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_FINGERPRINT_PARTS,
  items: { type: 'string', minLength: 1, maxLength: MAX_FINGERPRINT_PART_LENGTH },
  description: "the group's fingerprint; `{{default}}` stands for the default group key",
} as const;

const position = {
  type: 'integer',
  minimum: 0,
  maximum: MAX_RULES_PER_PROJECT - 1,
  description: "place in the project's order (0 is tried first); default: last on create, unchanged on update",
} as const;

export const ruleCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['match', 'fingerprint'],
  properties: { match, fingerprint, position },
} as const;

export const rulePatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { match, fingerprint, position },
} as const;

export const rule = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    projectId: { type: 'string' },
    position: { type: 'integer' },
    match: {
      type: 'object',
      properties: Object.fromEntries(FINGERPRINT_RULE_FIELDS.map((k) => [k, { type: 'string' }])),
    },
    fingerprint: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const ruleList = { type: 'object', properties: { items: { type: 'array', items: rule } } } as const;
