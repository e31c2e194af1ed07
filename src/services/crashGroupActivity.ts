import { ACTIVITY_RANGES, buckets, groupBadge, type ActivityRange } from '../domain/releaseHealth.ts';
import { NotFoundError, ValidationError } from '../domain/errors.ts';
import { isoMs } from '../lib/time.ts';
import { storageKeys, type CrashGroupsRepo } from '../repos/crashGroups/index.ts';
import type { CrashOccurrencesRepo } from '../repos/crashOccurrences.ts';
import type { Actor, CrashGroupActivityRepo } from '../repos/crashGroupActivity.ts';
import type { AccountsRepo } from '../repos/accounts.ts';
import type { ProjectsRepo } from '../repos/projects.ts';
import { present } from '../lib/invariant.ts';

export const MAX_COMMENT_CHARS = 4000;

/**
 * What a team does around a crash group beyond its status: who looks after it, what they said,
 * what happened to it (status history, regressions, assignments), and how often it happens.
 * Status changes themselves go through the crash workflow (services/crashGroups.ts), which
 * records their history.
 */
export function crashGroupActivityService(d: {
  groups: CrashGroupsRepo;
  occurrences: CrashOccurrencesRepo;
  activity: CrashGroupActivityRepo;
  accounts: AccountsRepo;
  projects: ProjectsRepo;
  now?: () => number;
}) {
  const now = d.now ?? Date.now;

  async function groupRow(projectId: string, groupId: string) {
    const row = await d.groups.row(projectId, groupId);
    if (!row) throw new NotFoundError('Crash group not found');
    return row;
  }

  async function members(projectId: string) {
    const teamId = await d.projects.teamOf(projectId);
    return teamId === null ? [] : d.accounts.membersOf(teamId);
  }

  async function badge(projectId: string, row: { id: string; status: string; first_seen_at: number }) {
    const moves = (await d.activity.lastMoves(projectId, [row.id])).get(row.id);
    return groupBadge(
      {
        status: row.status,
        firstSeenAt: Number(row.first_seen_at),
        regressedAt: moves?.regressedAt ?? null,
        movedByHandAt: moves?.movedByHandAt ?? null,
      },
      now(),
    );
  }

  async function details(projectId: string, groupId: string) {
    // A merged group's id reads as the group it was merged into.
    const row = await groupRow(projectId, groupId);
    const [history, assigned, comments, team, b] = await Promise.all([
      d.activity.history(projectId, row.id),
      d.activity.assignee(projectId, row.id),
      d.activity.comments(projectId, row.id),
      members(projectId),
      badge(projectId, row),
    ]);
    const who =
      assigned &&
      (team.find((m) => m.userId === assigned.userId)?.email ??
        (await d.accounts.getUser(assigned.userId))?.email ??
        null);
    return {
      status: row.status,
      badge: b,
      assignee: assigned && { userId: assigned.userId, email: who, assignedAt: assigned.assignedAt },
      /** who it can be assigned to */
      members: team.map((m) => ({ userId: m.userId, email: m.email })),
      history,
      comments,
    };
  }

  return {
    details,

    /** Occurrences and distinct users per hour (24h) or UTC day (14d, 90d), and the first and last release it was seen in. */
    async activity(projectId: string, groupId: string, range: ActivityRange) {
      const row = await groupRow(projectId, groupId);
      const starts = buckets(range, now());
      const from = present(starts[0], `the first ${range} activity bucket`);
      const a = await d.occurrences.activity(projectId, storageKeys(row), from, ACTIVITY_RANGES[range].bucketMs);
      return {
        range,
        badge: await badge(projectId, row),
        firstRelease: a.firstRelease,
        lastRelease: a.lastRelease,
        data: starts.map((t) => ({
          at: isoMs(t),
          occurrences: a.buckets.get(t)?.occurrences ?? 0,
          users: a.buckets.get(t)?.users ?? 0,
        })),
      };
    },

    /** Assigns the group to a member of the project's team, or with null to nobody; answers the details. */
    async assign(projectId: string, groupId: string, userId: string | null, actor: Actor) {
      const { id } = await groupRow(projectId, groupId);
      let label: string | null = null;
      if (userId !== null) {
        const m = (await members(projectId)).find((x) => x.userId === userId);
        if (!m) throw new ValidationError([{ path: '/userId', message: "must be a member of the project's team" }]);
        label = m.email;
      }
      await d.activity.assign(projectId, id, userId, actor, label);
      return details(projectId, id);
    },

    async comment(projectId: string, groupId: string, actor: Actor, body: string) {
      const { id } = await groupRow(projectId, groupId);
      const text = body.trim();
      if (text === '') throw new ValidationError([{ path: '/body', message: 'must not be empty' }]);
      return d.activity.addComment(projectId, id, actor, text);
    },
  };
}

export type CrashGroupActivityService = ReturnType<typeof crashGroupActivityService>;
