/**
 * The clustered schema (CLICKHOUSE_CLUSTER): the migration files are written for one server,
 * and this turns each statement into its cluster form, so there is one schema history, not two.
 *
 * - A MergeTree-family table `t` becomes `t_local`, `Replicated…MergeTree` on every node
 *   (`ON CLUSTER`), and `t`, a `Distributed` table over it: every query and insert of the
 *   service keeps the name `t`, and FINAL is applied per shard on the local tables.
 * - A `Null` table (the `*_ingest` tables) becomes a `Null` `t_local` on every node and a
 *   `Distributed` `t` over them; a materialized view reads and writes the local tables of its
 *   own node. So the API inserts a request body into the Distributed Null table, which sends it
 *   whole to one shard (by session), where the views turn it into rows of that shard's local
 *   tables (docs/scaling.md says why this and not views writing into Distributed tables).
 * - Sharding keeps a row and all its retries on one shard, which ReplacingMergeTree needs to
 *   collapse them: by session for events and network logs (their identities include the
 *   session), by project and group for crash occurrences. A table without a key here is refused.
 * - Inserts are synchronous to the shard (`distributed_foreground_insert = 1`, set by the HTTP
 *   adapter), so a 2xx still means committed on a replica of every shard the rows went to.
 *
 * Migration 001 and 002's copy of 001's tables (the `_v1` tables) moved a single server's first
 * layout; a cluster starts at 002's layout, so those steps are skipped there.
 */

/** The shard of a row: the same expression for a table and for the body that fills it. */
export const SHARD_KEYS: Readonly<Record<string, string>> = {
  events: 'cityHash64(toString(session_id))',
  network_logs: 'cityHash64(toString(session_id))',
  // the body's session id as text, spelled as toString(UUID) spells it, so a body and its rows agree
  // 002's ingest tables (004 drops them; a cluster still creates them on the way)
  events_ingest: 'cityHash64(lower(body.sessionId))',
  network_ingest: 'cityHash64(lower(body.sessionId))',
  // 004's ingest table reads the session id as a UUID, whose text is toString's
  ingest: 'cityHash64(toString(body.sessionId))',
  crash_occurrences: 'cityHash64(project_id, group_key)',
  // a session's start and crash facts on one shard, so ReplacingMergeTree collapses their retries
  session_facts: 'cityHash64(project_id, session_id)',
  // written only by their views, on the node of their facts; reads merge the states of every shard
  release_health_daily: 'cityHash64(project_id, app_version, platform)',
  release_adoption_hourly: 'cityHash64(project_id, app_version, platform)',
  // one row per session, beside its facts, so FINAL collapses its retries on its shard
  release_sessions: 'cityHash64(project_id, session_id)',
  release_seen: 'cityHash64(project_id, app_version, platform)',
  release_health_env_daily: 'cityHash64(project_id, app_version, platform)',
  // 014: a day's touches come from every shard's facts and its kept counts from the service; reads
  // take the latest per key (max, argMax) over all shards, so any shard will do
  release_day_touched: 'cityHash64(project_id, day)',
  release_day_counts: 'cityHash64(project_id, day)',
  release_day_counted: 'cityHash64(project_id, day)',
  // crash suspects (009): written by their views too, on the node of their facts or occurrences
  session_dimensions_daily: 'cityHash64(project_id, dimension, value)',
  crash_dimensions_daily: 'cityHash64(project_id, group_key)',
  crash_dimensions_project_daily: 'cityHash64(project_id, dimension, value)',
  // the crash page's state (011), beside its group's occurrences
  crash_group_daily: 'cityHash64(project_id, group_key)',
  // 012: the same state at a finer index
  crash_group_state: 'cityHash64(project_id, group_key)',
};

export const localName = (table: string) => `${table}_local`;

const quote = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** Whether a statement of a migration only moved a single server's older layout (see above). */
export function singleNodeHistory(version: number, statement: string): boolean {
  return version === 1 || (version === 2 && /\b\w+_v1\b/.test(statement));
}

/**
 * The bookkeeping tables of the migration runner, one logical table replicated to every node
 * (no shard in the path), so any node the service talks to knows what was applied.
 */
export function clusterBookkeeping(cluster: string): string[] {
  const c = quote(cluster);
  return [
    `CREATE TABLE IF NOT EXISTS schema_migrations ON CLUSTER ${c} (version UInt32, name String)
     ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{database}/schema_migrations', '{shard}-{replica}') ORDER BY version`,
    `CREATE TABLE IF NOT EXISTS schema_migration_steps ON CLUSTER ${c} (version UInt32, step UInt32)
     ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{database}/schema_migration_steps', '{shard}-{replica}') ORDER BY (version, step)`,
  ];
}

/**
 * Turns one single-server statement into the statements of the clustered schema. `known`
 * collects the tables created so far (pass the same set for every statement, in order), so
 * that views and ALTERs find their local tables.
 */
export function clusterStatements(sql: string, cluster: string, known: Set<string>): string[] {
  const c = quote(cluster);
  const s = sql.trim();

  const table = /^CREATE TABLE IF NOT EXISTS (\w+)\s*\(([\s\S]*)\)\s*ENGINE\s*=\s*(\w+)([\s\S]*)$/i.exec(s);
  if (table) {
    const [, name = '', columns = '', engine = '', rest = ''] = table;
    const key = SHARD_KEYS[name];
    if (key === undefined)
      throw new Error(`clustered schema: table ${name} has no shard key in src/stores/clickhouse/cluster.ts`);
    let localEngine: string;
    let tail = rest;
    if (/MergeTree$/.test(engine)) {
      const args = /^\s*\(([^)]*)\)/.exec(rest);
      tail = args ? rest.slice(args[0].length) : rest;
      const extra = args?.[1]?.trim() ? `, ${args[1].trim()}` : '';
      localEngine = `Replicated${engine}('/clickhouse/tables/{shard}/{database}/${localName(name)}', '{replica}'${extra})`;
    } else if (engine === 'Null') {
      localEngine = 'Null';
    } else {
      throw new Error(`clustered schema: no cluster form for engine ${engine} (table ${name})`);
    }
    known.add(name);
    return [
      `CREATE TABLE IF NOT EXISTS ${localName(name)} ON CLUSTER ${c}\n(${columns})\nENGINE = ${localEngine}${tail}`,
      `CREATE TABLE IF NOT EXISTS ${name} ON CLUSTER ${c} AS ${localName(name)}\nENGINE = Distributed(${c}, currentDatabase(), ${quote(localName(name))}, ${key})`,
    ];
  }

  const view = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\s([\s\S]*)$/i.exec(s);
  if (view) {
    const [, name = '', target = '', select = ''] = view;
    if (!known.has(target))
      throw new Error(`clustered schema: view ${name} writes to ${target}, which no migration created`);
    // Only table references move to the local tables: `ARRAY JOIN events` names a column.
    const local = select.replace(/(?<!ARRAY\s+)\b(FROM|JOIN)(\s+)(\w+)\b/gi, (m, kw: string, sp: string, t: string) =>
      known.has(t) ? `${kw}${sp}${localName(t)}` : m,
    );
    return [`CREATE MATERIALIZED VIEW IF NOT EXISTS ${name} ON CLUSTER ${c} TO ${localName(target)} AS\n${local}`];
  }

  const alter = /^ALTER TABLE (\w+)\s([\s\S]*)$/i.exec(s);
  if (alter) {
    const [, name = '', rest = ''] = alter;
    if (!known.has(name)) throw new Error(`clustered schema: ALTER of ${name}, which no migration created`);
    const local = `ALTER TABLE ${localName(name)} ON CLUSTER ${c} ${rest}`;
    // The Distributed table mirrors the columns; storage clauses (TTL, settings) are the local table's.
    return /^\s*(ADD|DROP|MODIFY|RENAME|COMMENT)\s+COLUMN\b/i.test(rest)
      ? [local, `ALTER TABLE ${name} ON CLUSTER ${c} ${rest}`]
      : [local];
  }

  const drop = /^DROP (TABLE|VIEW) IF EXISTS (\w+)\s*$/i.exec(s);
  if (drop) {
    const [, kind = '', name = ''] = drop;
    if (kind.toUpperCase() === 'VIEW' || !known.has(name))
      return [`DROP ${kind} IF EXISTS ${name} ON CLUSTER ${c} SYNC`];
    known.delete(name);
    return [
      `DROP TABLE IF EXISTS ${name} ON CLUSTER ${c} SYNC`,
      `DROP TABLE IF EXISTS ${localName(name)} ON CLUSTER ${c} SYNC`,
    ];
  }

  // Data statements go through the Distributed tables as they are.
  if (/^(INSERT|SELECT|OPTIMIZE)\b/i.test(s)) return [s];

  throw new Error(`clustered schema: no cluster form for statement: ${s.slice(0, 80)}`);
}
