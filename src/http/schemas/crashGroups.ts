import { MAX_MERGE_GROUPS } from '../../domain/crashGroupMerge.ts';
import { CRASH_GROUP_STATUSES } from '../../domain/crashGroupStatus.ts';

export const crashGroupParams = {
  type: 'object',
  required: ['projectId', 'groupId'],
  properties: {
    projectId: { type: 'string', format: 'uuid' },
    groupId: { type: 'string', format: 'uuid' },
  },
} as const;

export const crashGroupPatchBody = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: [...CRASH_GROUP_STATUSES] } },
} as const;

export const crashGroupMergeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['groupIds'],
  properties: {
    groupIds: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_MERGE_GROUPS,
      uniqueItems: true,
      items: { type: 'string', format: 'uuid' },
      description:
        'the groups merged into the one in the path: their keys lead to it, their occurrences, devices, releases and history join it',
    },
  },
} as const;

const nullableString = { type: ['string', 'null'] } as const;
const stringList = { type: 'array', items: { type: 'string' } } as const;

/** The export's crash-group row plus the workflow and alert fields. */
export const crashGroup = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    message: { type: 'string' },
    status: { type: 'string', enum: [...CRASH_GROUP_STATUSES] },
    isFatal: { type: 'boolean' },
    handled: { type: 'boolean' },
    occurrenceCount: { type: 'integer' },
    affectedDevices: { type: 'integer' },
    platform: nullableString,
    appVersion: nullableString,
    osVersion: nullableString,
    firstSeenAt: { type: 'string', format: 'date-time' },
    lastSeenAt: { type: 'string', format: 'date-time' },
    stackHead: { type: 'string' },
    summary: nullableString,
    summarySource: {
      ...nullableString,
      description: '"openai:<model>" or "deterministic"; null until the alert job ran',
    },
    appVersions: { ...stringList, description: 'every app version this crash was seen in' },
    resolvedVersions: { ...stringList, description: 'the versions seen when it was last resolved; others reopen it' },
    level: {
      type: 'string',
      enum: ['fatal', 'error', 'warning', 'info'],
      description: 'the most severe level of its occurrences',
    },

    alert: {
      type: ['object', 'null'],
      properties: {
        status: { type: 'string', enum: ['pending', 'done', 'failed'] },
        attempts: { type: 'integer' },
        lastError: nullableString,
        sentAt: nullableString,
        note: nullableString,
      },
    },
  },
} as const;
