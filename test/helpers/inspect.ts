import type { TestServer } from './server.ts';

/** A test server, or a bare `createServer` one (the synchronous path: nothing to settle). */
type Inspected = Pick<TestServer, 'svc'> & { settled?: TestServer['settled'] };
import { waitFor } from './wait.ts';

/**
 * Reads the stores directly, to check what ingestion committed (independent of the export API).
 * Each read first waits for the spools to load what was acknowledged, so it sees every 201 so far.
 */
export async function countRows(s: Inspected, table: 'events' | 'network_logs', projectId: string): Promise<number> {
  await s.settled?.();
  const r = await s.svc.stores.ch.query<{ c: number }>(
    `SELECT count() AS c FROM ${table} FINAL WHERE project_id = {p:String}`,
    { p: projectId },
  );
  return Number(r[0]!.c);
}

export async function sessionRow(s: Inspected, projectId: string, sessionId: string) {
  await s.settled?.();
  const r = await s.svc.stores.pg.query<Record<string, any>>(
    'SELECT * FROM sessions WHERE project_id = $1 AND id::text = $2',
    [projectId, sessionId],
  );
  return r.rows[0];
}

/**
 * Crash groups as rows: identity and workflow from Postgres, and, in the columns they had when
 * Postgres counted them, the facts aggregated from the occurrences in ClickHouse.
 */
export async function crashGroups(s: Inspected, projectId: string) {
  await s.settled?.();
  const r = await s.svc.stores.pg.query<Record<string, any>>(
    'SELECT * FROM crash_groups WHERE project_id = $1 ORDER BY first_seen_at, id',
    [projectId],
  );
  const facts = await s.svc.stores.ch.query<Record<string, any>>(
    `SELECT group_key, uniqExact(id) AS occurrence_count, uniqExact(device_fingerprint) AS affected_devices,
       toUnixTimestamp64Milli(max(occurred_at)) AS last_seen_at, argMax(tuple(platform, app_version, os_version), (occurred_at, id)) AS latest,
       max(is_fatal) AS is_fatal, min(handled) AS handled, groupUniqArray(app_version) AS app_versions
     FROM crash_occurrences WHERE project_id = {p:String} GROUP BY group_key`,
    { p: projectId },
  );
  const byKey = new Map(facts.map((f) => [f.group_key, f]));
  return r.rows.map((g) => {
    const f = byKey.get(g.group_key);
    if (!f) return g;
    const [platform, app_version, os_version] = f.latest;
    return {
      ...g,
      occurrence_count: Number(f.occurrence_count),
      affected_devices: Number(f.affected_devices),
      last_seen_at: Number(f.last_seen_at),
      platform,
      app_version,
      os_version,
      is_fatal: Boolean(f.is_fatal),
      handled: Boolean(f.handled),
      app_versions: f.app_versions,
    };
  });
}

/** Distinct crash occurrences stored for a project (ClickHouse). */
export async function countOccurrences(s: Inspected, projectId: string): Promise<number> {
  await s.settled?.();
  const r = await s.svc.stores.ch.query<{ c: number }>(
    'SELECT uniqExact(id) AS c FROM crash_occurrences WHERE project_id = {p:String}',
    { p: projectId },
  );
  return Number(r[0]!.c);
}

export async function outboxJobs(s: Inspected, projectId: string) {
  await s.settled?.();
  const r = await s.svc.stores.pg.query<Record<string, any>>('SELECT * FROM alert_outbox WHERE project_id = $1', [
    projectId,
  ]);
  return r.rows;
}

/**
 * Resolves once every crash acknowledged so far is recorded and the outbox holds no pending job
 * (each alert, digest and webhook delivery done or failed), running due jobs meanwhile: the signal
 * that the alert work was processed, before a test asserts that nothing more was sent.
 */
export async function outboxIdle(s: TestServer, timeoutMs = 30_000): Promise<void> {
  await s.settled();
  await waitFor(
    'every alert job to be done',
    async () => {
      await s.worker?.worker.runDue();
      const r = await s.svc.stores.pg.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM alert_outbox WHERE status = 'pending'",
      );
      return r.rows[0]!.n === 0;
    },
    timeoutMs,
  );
}

export { metricValue } from '../../scripts/metricValue.ts';
