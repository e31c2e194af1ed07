import type { TestServer } from './server.ts';

/** Reads the stores directly, to check what ingestion committed (independent of the export API). */
export async function countRows(s: TestServer, table: 'events' | 'network_logs', projectId: string): Promise<number> {
  const r = await s.svc.stores.ch.query<{ c: number }>(`SELECT count() AS c FROM ${table} FINAL WHERE project_id = {p:String}`, { p: projectId });
  return Number(r[0]!.c);
}

export async function sessionRow(s: TestServer, projectId: string, sessionId: string) {
  const r = await s.svc.stores.pg.query<Record<string, any>>('SELECT * FROM sessions WHERE project_id = $1 AND id::text = $2', [projectId, sessionId]);
  return r.rows[0];
}

export async function crashGroups(s: TestServer, projectId: string) {
  const r = await s.svc.stores.pg.query<Record<string, any>>('SELECT * FROM crash_groups WHERE project_id = $1 ORDER BY first_seen_at, id', [projectId]);
  return r.rows;
}

export async function outboxJobs(s: TestServer, projectId: string) {
  const r = await s.svc.stores.pg.query<Record<string, any>>('SELECT * FROM alert_outbox WHERE project_id = $1', [projectId]);
  return r.rows;
}
