// JSON Schemas of a crash group's suspects and trail before the crash (management API and dashboard).
import { TRAIL_STEPS, TRAIL_WINDOW_SECONDS } from '../../domain/crashTrail.ts';
import { SUSPECT_PERIOD_DAYS } from '../../services/crashInsights.ts';

export const suspectsQuery = {
  type: 'object',
  properties: {
    days: {
      type: 'integer',
      minimum: SUSPECT_PERIOD_DAYS.min,
      maximum: SUSPECT_PERIOD_DAYS.max,
      default: SUSPECT_PERIOD_DAYS.default,
      description:
        "the period: this many UTC days ending at the group's last occurrence " +
        '(its days with occurrences are compared)',
    },
  },
} as const;

export const trailQuery = {
  type: 'object',
  properties: {
    window: {
      type: 'integer',
      minimum: TRAIL_WINDOW_SECONDS.min,
      maximum: TRAIL_WINDOW_SECONDS.max,
      default: TRAIL_WINDOW_SECONDS.default,
      description: 'seconds before each crash',
    },
    steps: {
      type: 'integer',
      minimum: TRAIL_STEPS.min,
      maximum: TRAIL_STEPS.max,
      default: TRAIL_STEPS.default,
      description: 'the last steps of each trail',
    },
  },
} as const;

const nullableNumber = { type: ['number', 'null'] } as const;

export const suspects = {
  type: 'object',
  properties: {
    period: {
      type: 'object',
      properties: {
        days: { type: 'integer' },
        from: { type: ['string', 'null'] },
        to: { type: ['string', 'null'] },
        daysWithOccurrences: { type: 'integer' },
      },
    },
    occurrences: { type: 'number' },
    baseline: { type: 'string' },
    method: { type: 'string' },
    dimensions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          dimension: { type: 'string' },
          occurrences: { type: 'number' },
          baseline: { type: 'number' },
          baselineUnit: { type: 'string' },
        },
      },
    },
    suspects: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          dimension: { type: 'string' },
          value: { type: 'string' },
          groupCount: { type: 'number' },
          groupShare: { type: 'number' },
          baselineCount: { type: 'number' },
          baselineShare: { type: 'number' },
          baselineUnit: { type: 'string' },
          lift: nullableNumber,
          liftLow: { type: 'number' },
        },
      },
    },
  },
} as const;

export const trail = {
  type: 'object',
  properties: {
    windowSeconds: { type: 'integer' },
    steps: { type: 'integer' },
    sampleLimit: { type: 'integer' },
    sampled: { type: 'integer' },
    withoutEvents: { type: 'integer' },
    trails: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          steps: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                kind: { type: 'string', enum: ['screen', 'tap', 'event', 'request'] },
                label: { type: 'string' },
              },
            },
          },
          occurrences: { type: 'integer' },
          share: { type: 'number' },
          sessionId: { type: 'string' },
          occurredAt: { type: 'string' },
        },
      },
    },
  },
} as const;
