import type { Postgres } from '../../stores/postgres/port.ts';
import type { CrashGroupStatus } from '../../domain/crashGroupStatus.ts';
import { COLUMNS, GROUPS, type GroupRow } from './rows.ts';

/** A page of the crash list: which class of counters, which filters, which order. */
export interface ListQuery {
  status?: CrashGroupStatus;
  /** the counters of the crash levels (fatal, error) or of the message levels (warning, info) */
  cls: 0 | 1;
  /** crash class only: groups with a fatal occurrence, or with none */
  fatal?: boolean;
  sort: 'lastSeen' | 'firstSeen' | 'occurrences' | 'users';
  /** a substring of the message or of the stack's head, any case */
  search?: string;
  offset: number;
  limit: number;
  /** the total is counted up to this many */
  countUpTo: number;
}

/** A listed group: its row and the counters the list ordered it by. */
export type ListedRow = GroupRow & { users: number };

/** `%`, `_` and `\` of a search taken literally by ILIKE. */
export const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A page of the crash list, filtered, ordered and cut in Postgres on the groups' counters
 * (an index per order, postgres/018), with the total the filters leave.
 */
export async function listPage(
  db: Postgres,
  projectId: string,
  o: ListQuery,
): Promise<{ rows: ListedRow[]; total: number }> {
  const c = o.cls === 0 ? 'crash' : 'message';
  const params: unknown[] = [projectId];
  // The partial indexes' own predicate, written the same way so the planner can use them.
  let w = `project_id = $1 AND merged_into IS NULL AND ${c}_occurrences > 0`;
  if (o.status) w += ` AND status = $${params.push(o.status)}`;
  if (o.cls === 0 && o.fatal !== undefined) w += o.fatal ? ' AND fatal_occurrences > 0' : ' AND fatal_occurrences = 0';
  if (o.search) w += ` AND (message || ' ' || stack_head) ILIKE $${params.push(`%${likeLiteral(o.search)}%`)}`;
  const by = {
    lastSeen: `${c}_last_seen_at`,
    firstSeen: 'first_seen_at',
    occurrences: `${c}_occurrences`,
    users: `${c}_users`,
  }[o.sort];
  const [page, count] = await Promise.all([
    db.query<ListedRow>(
      `SELECT ${COLUMNS}, ${c}_users AS users FROM ${GROUPS} WHERE ${w}
       ORDER BY ${by} DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, o.limit, o.offset],
    ),
    // Counted up to `countUpTo` (services/crashGroups.ts): counting 100k index entries was
    // most of a page's time, and a number past what the reader can page to changes nothing.
    db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${GROUPS} WHERE ${w} LIMIT $${params.length + 1}) t`,
      [...params, o.countUpTo],
    ),
  ]);
  return { rows: page.rows, total: Number(count.rows[0]?.n ?? 0) };
}
