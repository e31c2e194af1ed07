// JSON Schemas of a crash group's activity: its chart, history, assignee and comments (management API and dashboard).
import { ACTIVITY_RANGES } from '../../domain/releaseHealth.ts';
import { MAX_COMMENT_CHARS } from '../../services/crashGroupActivity.ts';

export const activityQuery = {
  type: 'object',
  properties: {
    range: { type: 'string', enum: Object.keys(ACTIVITY_RANGES) as (keyof typeof ACTIVITY_RANGES)[], default: '14d' },
  },
} as const;

export const assigneeBody = {
  type: 'object',
  required: ['userId'],
  properties: {
    userId: { type: ['string', 'null'], format: 'uuid', description: "a member of the project's team; null: nobody" },
  },
} as const;

export const commentBody = {
  type: 'object',
  required: ['body'],
  properties: { body: { type: 'string', minLength: 1, maxLength: MAX_COMMENT_CHARS } },
} as const;

export const comment = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    author: { type: 'string', description: '"admin" or the account\'s email' },
    authorUserId: { type: ['string', 'null'] },
    body: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;
