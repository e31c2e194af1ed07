import { NotFoundError } from '../domain/errors.ts';
import { MIN_SUSPECT_COUNT, rankSuspects } from '../domain/suspects.ts';
import { commonTrails, TRAIL_RAW_STEPS, TRAIL_SAMPLE } from '../domain/crashTrail.ts';
import type { CrashInsightsRepo } from '../repos/crashInsights.ts';
import type { CrashGroupsRepo } from '../repos/crashGroups/index.ts';

/** Suspects are compared over this many UTC days ending at the group's last occurrence, unless asked. */
export const SUSPECT_PERIOD_DAYS = { default: 30, min: 1, max: 90 } as const;

/** What a person reads under the table: how the ranking was made. */
const SUSPECT_METHOD =
  `lift = share of the group's occurrences with the value / share of the baseline with it ` +
  '(among those with a known value of the dimension), on the days the group occurred; ranked by its lower bound ' +
  "(95 % Wilson lower bound of the group's share over the 95 % Wilson upper bound of the baseline's share); " +
  `only values with a bound above 1 and at least ${MIN_SUSPECT_COUNT} occurrences`;

/**
 * The crash page's suspects and trail before the crash (docs/decisions.md, "Crash suspects and
 * the trail"): the group's identity from Postgres, everything else from ClickHouse.
 */
export function crashInsightsService(d: { groups: Pick<CrashGroupsRepo, 'row'>; insights: CrashInsightsRepo }) {
  async function groupKey(projectId: string, groupId: string): Promise<string> {
    const row = await d.groups.row(projectId, groupId);
    if (!row) throw new NotFoundError('Crash group not found');
    return row.group_key;
  }

  return {
    async suspects(projectId: string, groupId: string, days: number = SUSPECT_PERIOD_DAYS.default) {
      const c = await d.insights.suspectCounts(projectId, await groupKey(projectId, groupId), days);
      return {
        period: { days, from: c.from, to: c.to, daysWithOccurrences: c.days.length },
        occurrences: c.groupOccurrences,
        baseline:
          "the project's sessions started on the days the group occurred (environment and tags: " +
          "the project's crash occurrences of those days)",
        method: SUSPECT_METHOD,
        dimensions: c.dimensions.map((x) => ({
          dimension: x.dimension,
          occurrences: x.groupTotal,
          baseline: x.baselineTotal,
          baselineUnit: x.baselineUnit,
        })),
        suspects: rankSuspects(c.dimensions),
      };
    },

    async trail(projectId: string, groupId: string, windowSeconds: number, steps: number) {
      const windows = await d.insights.trailWindows(projectId, await groupKey(projectId, groupId), {
        windowSeconds,
        sample: TRAIL_SAMPLE,
        rawSteps: TRAIL_RAW_STEPS,
      });
      const t = commonTrails(windows, steps);
      return {
        windowSeconds,
        steps,
        sampleLimit: TRAIL_SAMPLE,
        sampled: t.sampled,
        withoutEvents: t.withoutEvents,
        trails: t.trails.map((x) => ({
          steps: x.steps,
          occurrences: x.occurrences,
          share: x.share,
          sessionId: x.sessionId,
          occurredAt: new Date(x.occurredAt).toISOString(),
        })),
      };
    },
  };
}

export type CrashInsightsService = ReturnType<typeof crashInsightsService>;
