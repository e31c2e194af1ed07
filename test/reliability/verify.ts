import { expect } from 'vitest';
import type { ClickHouse } from '../../src/stores/clickhouse/port.ts';
import type { Postgres } from '../../src/stores/postgres/port.ts';
import type { Ledger } from './load.ts';
import { openServiceStores } from './stores.ts';

/** A ClickHouse table's rows of the project against what was acknowledged. */
interface RowTally {
  acked: number;
  storedFinal: number;
  storedRaw: number;
  distinct: number;
  missing: string[];
  unexpected: number;
}

export interface StoreCheck {
  sessions: { acked: number; stored: number; missing: string[]; unexpected: string[]; endedNotEnded: string[] };
  events: RowTally;
  network: RowTally;
  crashes: { acked: number; stored: number; missing: string[]; unexpected: string[]; counterMismatch: string[] };
}

/** Reads the stores directly and compares them with what the service acknowledged. */
export async function checkStores(
  pg: Postgres,
  ch: ClickHouse,
  projectId: string,
  ledger: Ledger,
): Promise<StoreCheck> {
  const sess = await pg.query<{ id: string; ended_at: number | null }>(
    'SELECT id::text AS id, ended_at FROM sessions WHERE project_id = $1',
    [projectId],
  );
  const storedSessions = new Set(sess.rows.map((r) => r.id));
  const endedNotEnded = sess.rows.filter((r) => ledger.ended.has(r.id) && r.ended_at === null).map((r) => r.id);

  const ev = await ch.query<{ k: string }>(
    "SELECT concat(session_id, ':', toString(sequence_number)) AS k FROM events FINAL WHERE project_id = {p:String}",
    { p: projectId },
  );
  const evRaw = await ch.query<{ c: number }>('SELECT count() AS c FROM events WHERE project_id = {p:String}', {
    p: projectId,
  });
  const evKeys = new Set(ev.map((r) => r.k));

  const nl = await ch.query<{ id: string }>('SELECT id FROM network_logs FINAL WHERE project_id = {p:String}', {
    p: projectId,
  });
  const nlRaw = await ch.query<{ c: number }>('SELECT count() AS c FROM network_logs WHERE project_id = {p:String}', {
    p: projectId,
  });
  const nlIds = new Set(nl.map((r) => r.id));

  // Occurrences are ClickHouse facts (FINAL: a retried report is one row); the group's counter is
  // what the export shows, aggregated from them.
  const occ = {
    rows: await ch.query<{ id: string; group_key: string }>(
      'SELECT id, group_key FROM crash_occurrences FINAL WHERE project_id = {p:String}',
      { p: projectId },
    ),
  };
  const counted = await ch.query<{ k: string; n: number }>(
    'SELECT group_key AS k, uniqExact(id) AS n FROM crash_occurrences WHERE project_id = {p:String} GROUP BY group_key',
    { p: projectId },
  );
  const counters = new Map(counted.map((c) => [c.k, Number(c.n)]));
  // …and the counters Postgres keeps for the crash list (postgres/018), counted once per occurrence too.
  const groups = {
    rows: (
      await pg.query<{ group_key: string; pg_count: number }>(
        'SELECT group_key, (crash_occurrences + message_occurrences)::int AS pg_count FROM crash_groups WHERE project_id = $1',
        [projectId],
      )
    ).rows.map((g) => ({
      group_key: g.group_key,
      occurrence_count: counters.get(g.group_key) ?? 0,
      pg_count: Number(g.pg_count),
    })),
  };
  const perKey = new Map<string, number>();
  for (const o of occ.rows) perKey.set(o.group_key, (perKey.get(o.group_key) ?? 0) + 1);
  const ackedPerKey = new Map<string, number>();
  for (const k of ledger.crashes.values()) ackedPerKey.set(k, (ackedPerKey.get(k) ?? 0) + 1);
  const counterMismatch = groups.rows
    .filter(
      (g) =>
        g.occurrence_count !== perKey.get(g.group_key) ||
        g.occurrence_count !== ackedPerKey.get(g.group_key) ||
        g.pg_count !== g.occurrence_count,
    )
    .map(
      (g) =>
        `${g.group_key.slice(0, 8)}: counter ${g.occurrence_count}, Postgres counter ${g.pg_count}, occurrences ${perKey.get(g.group_key)}, acked ${ackedPerKey.get(g.group_key)}`,
    );
  if (groups.rows.length !== ackedPerKey.size)
    counterMismatch.push(`groups stored ${groups.rows.length}, acked ${ackedPerKey.size}`);
  const occIds = new Set(occ.rows.map((r) => r.id));

  const diff = <T>(a: Set<T> | Map<T, unknown>, b: Set<T>) => [...a.keys()].filter((x) => !b.has(x));
  const tally = (acked: Set<string>, final: unknown[], raw: { c: number }[], keys: Set<string>): RowTally => ({
    acked: acked.size,
    storedFinal: final.length,
    storedRaw: Number(raw[0]!.c),
    distinct: keys.size,
    missing: diff(acked, keys).slice(0, 10),
    unexpected: diff(keys, acked).length,
  });
  return {
    sessions: {
      acked: ledger.sessions.size,
      stored: sess.rows.length,
      missing: diff(ledger.sessions, storedSessions).map(String),
      unexpected: diff(storedSessions, ledger.sessions).map(String),
      endedNotEnded,
    },
    events: tally(ledger.events, ev, evRaw, evKeys),
    network: tally(ledger.networkLogs, nl, nlRaw, nlIds),
    crashes: {
      acked: ledger.crashes.size,
      stored: occ.rows.length,
      missing: diff(ledger.crashes, occIds).map(String),
      unexpected: diff(occIds, new Set(ledger.crashes.keys())).map(String),
      counterMismatch,
    },
  };
}

/** After the service has stopped: opens its stores (it owned them) and checks them against the ledger. */
export async function checkServiceStores(dataDir: string, projectId: string, ledger: Ledger): Promise<StoreCheck> {
  const stores = await openServiceStores(dataDir, process.env.DATABASE_URL);
  try {
    return await checkStores(stores.pg, stores.ch, projectId, ledger);
  } finally {
    await stores.close();
  }
}

/** Every acknowledged session, event, network log and crash is stored, and each row once. */
export function expectExactlyOnce(check: StoreCheck): void {
  expect(check.sessions).toMatchObject({ missing: [], unexpected: [], endedNotEnded: [] });
  expect(check.events).toMatchObject({ missing: [], unexpected: 0 });
  expect(check.events.storedFinal).toBe(check.events.acked);
  expect(check.events.distinct).toBe(check.events.acked);
  expect(check.network).toMatchObject({ missing: [], unexpected: 0 });
  expect(check.network.storedFinal).toBe(check.network.acked);
  expect(check.crashes).toMatchObject({ missing: [], unexpected: [], counterMismatch: [] });
}
