export const projectCreateBody = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
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
  },
} as const;

export const keyInfo = {
  type: 'object',
  properties: { id: { type: 'string' }, createdAt: { type: 'string' } },
} as const;

/** Alert recipients of a project; null falls back to ALERT_EMAIL_TO. */
export const projectPatchBody = {
  type: 'object',
  required: ['alertEmails'],
  properties: {
    alertEmails: { type: ['array', 'null'], maxItems: 50, items: { type: 'string', format: 'email', maxLength: 320 } },
  },
} as const;
