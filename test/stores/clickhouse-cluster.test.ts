import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clickHouseSteps, readMigrations, retentionStatement } from '../../src/stores/migrations.ts';
import { clusterBookkeeping, clusterStatements } from '../../src/stores/clickhouse/cluster.ts';
import { openChdb } from '../../src/stores/clickhouse/chdb.ts';
import { loadConfig } from '../../src/config.ts';

// The clustered schema (CLICKHOUSE_CLUSTER) as text: no cluster runs here (the embedded engine
// has none), so the generated DDL is checked statement by statement, and parsed by the real
// engine's parser (formatQuery), which knows ON CLUSTER and the Replicated/Distributed engines.
// test/containers/ runs it on a two-shard, two-replica cluster where Docker is available.

const steps = clickHouseSteps(readMigrations('clickhouse'), 'flightrec');
const all = steps.flatMap((m) => m.steps.flat());
const find = (re: RegExp) => {
  const hits = all.filter((s) => re.test(s));
  expect(hits, String(re)).toHaveLength(1);
  return hits[0]!;
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-cluster-'));
const ch = await openChdb(dir);
afterAll(async () => {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('clustered ClickHouse schema', () => {
  it('leaves the single-server migrations as they are without a cluster', () => {
    const plain = clickHouseSteps(readMigrations('clickhouse'));
    expect(plain.map((m) => m.steps)).toEqual(readMigrations('clickhouse').map((m) => m.statements.map((s) => [s])));
  });

  it('starts a cluster at the current layout: nothing of 001 or of the copy of its tables', () => {
    expect(steps.find((m) => m.version === 1)!.steps.flat()).toEqual([]);
    expect(all.some((s) => /_v1\b/.test(s) || /^RENAME/i.test(s))).toBe(false);
    // the step numbering stays the file's, so a migration interrupted half-way resumes at its step
    expect(steps.map((m) => m.steps.length)).toEqual(readMigrations('clickhouse').map((m) => m.statements.length));
  });

  it('creates replicated local tables on every node and Distributed tables over them, sharded by session or by group', () => {
    const local = find(/^CREATE TABLE IF NOT EXISTS events_local ON CLUSTER 'flightrec'\n/);
    expect(local).toMatch(
      /\nENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{shard\}\/\{database\}\/events_local', '\{replica\}'\)\nPARTITION BY toYYYYMM\(/,
    );
    expect(local).toMatch(/ORDER BY \(project_id, session_id, sequence_number\)$/);
    expect(local).toContain('id String ALIAS'); // the columns as written
    expect(find(/^CREATE TABLE IF NOT EXISTS events ON CLUSTER/)).toBe(
      "CREATE TABLE IF NOT EXISTS events ON CLUSTER 'flightrec' AS events_local\nENGINE = Distributed('flightrec', currentDatabase(), 'events_local', cityHash64(toString(session_id)))",
    );
    expect(find(/^CREATE TABLE IF NOT EXISTS network_logs ON CLUSTER/)).toMatch(
      /Distributed\('flightrec', currentDatabase\(\), 'network_logs_local', cityHash64\(toString\(session_id\)\)\)$/,
    );
    expect(find(/^CREATE TABLE IF NOT EXISTS crash_occurrences_local ON CLUSTER/)).toMatch(
      /ENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{shard\}\/\{database\}\/crash_occurrences_local', '\{replica\}'\)/,
    );
    expect(find(/^CREATE TABLE IF NOT EXISTS crash_occurrences ON CLUSTER/)).toMatch(
      /'crash_occurrences_local', cityHash64\(project_id, group_key\)\)$/,
    );
  });

  it("sends each request body whole to one shard, where the views write that shard's local tables", () => {
    expect(find(/^CREATE TABLE IF NOT EXISTS ingest_local ON CLUSTER/)).toMatch(/\nENGINE = Null$/);
    expect(find(/^CREATE TABLE IF NOT EXISTS ingest ON CLUSTER/)).toMatch(
      /'ingest_local', cityHash64\(toString\(body\.sessionId\)\)\)$/,
    );
    const events = find(/^CREATE MATERIALIZED VIEW IF NOT EXISTS ingest_events_mv /);
    expect(events).toMatch(
      /^CREATE MATERIALIZED VIEW IF NOT EXISTS ingest_events_mv ON CLUSTER 'flightrec' TO events_local AS\n/,
    );
    expect(events).toContain('FROM ingest_local\nARRAY JOIN body.events AS e');
    expect(find(/^CREATE MATERIALIZED VIEW IF NOT EXISTS ingest_network_mv /)).toMatch(
      /TO network_logs_local AS[\s\S]*FROM ingest_local\nARRAY JOIN/,
    );
    // 004 drops 002's pipeline on every node, its Distributed and local tables both
    expect(all).toContain("DROP VIEW IF EXISTS events_ingest_mv ON CLUSTER 'flightrec' SYNC");
    expect(all).toContain("DROP TABLE IF EXISTS network_ingest ON CLUSTER 'flightrec' SYNC");
    expect(all).toContain("DROP TABLE IF EXISTS network_ingest_local ON CLUSTER 'flightrec' SYNC");
    // 005's merge setting is a storage setting: the local tables only
    expect(all).toContain("ALTER TABLE events_local ON CLUSTER 'flightrec' MODIFY SETTING merge_selector_base = 20");
    expect(all.some((s) => /^ALTER TABLE events ON CLUSTER/.test(s))).toBe(false);
    // 013's fsyncs too: each statement goes to its replicated table alone (a Distributed table writes no parts)
    const durable = steps.find((m) => m.name === '013_durable_parts.sql')!.steps;
    expect(durable.length).toBeGreaterThan(0);
    expect(durable.every((s) => s.length === 1 && /^ALTER TABLE \w+_local ON CLUSTER 'flightrec' /.test(s[0]!))).toBe(
      true,
    );
    // 002's pipeline, as a cluster that started before 004 created it
    expect(find(/^CREATE TABLE IF NOT EXISTS events_ingest_local ON CLUSTER/)).toMatch(/\nENGINE = Null$/);
    expect(find(/^CREATE TABLE IF NOT EXISTS events_ingest ON CLUSTER/)).toMatch(
      /'events_ingest_local', cityHash64\(lower\(body\.sessionId\)\)\)$/,
    );
    expect(find(/^CREATE TABLE IF NOT EXISTS network_ingest ON CLUSTER/)).toMatch(
      /'network_ingest_local', cityHash64\(lower\(body\.sessionId\)\)\)$/,
    );
    const mv = find(/^CREATE MATERIALIZED VIEW IF NOT EXISTS events_ingest_mv /);
    expect(mv).toMatch(
      /^CREATE MATERIALIZED VIEW IF NOT EXISTS events_ingest_mv ON CLUSTER 'flightrec' TO events_local AS\n/,
    );
    expect(mv).toContain('FROM events_ingest_local)');
    expect(mv).toContain('ARRAY JOIN events AS e'); // a column, not the table
    expect(find(/^CREATE MATERIALIZED VIEW IF NOT EXISTS events_ingest_network_mv /)).toMatch(
      /TO network_logs_local AS[\s\S]*FROM events_ingest_local\)/,
    );
    expect(find(/^CREATE MATERIALIZED VIEW IF NOT EXISTS network_ingest_mv /)).toMatch(
      /TO network_logs_local AS[\s\S]*FROM network_ingest_local\)/,
    );
  });

  it('keeps release health on the shard of its session facts: the view reads and writes local tables', () => {
    expect(find(/^CREATE TABLE IF NOT EXISTS session_facts ON CLUSTER/)).toMatch(
      /'session_facts_local', cityHash64\(project_id, session_id\)\)$/,
    );
    for (const t of ['release_health_daily', 'release_adoption_hourly']) {
      expect(find(new RegExp(`^CREATE TABLE IF NOT EXISTS ${t}_local ON CLUSTER`))).toMatch(
        /ENGINE = ReplicatedAggregatingMergeTree\(/,
      );
      const mv = find(new RegExp(`^CREATE MATERIALIZED VIEW IF NOT EXISTS ${t}_mv `));
      expect(mv).toMatch(new RegExp(`TO ${t}_local AS\n`));
      expect(mv).toContain('FROM session_facts_local\n');
    }
  });

  it('applies retention, ALTERs and DROPs on every node, to the tables that store rows', () => {
    expect(retentionStatement('events', 'timestamp', 30, 'flightrec')).toBe(
      "ALTER TABLE events_local ON CLUSTER 'flightrec' MODIFY TTL toDateTime(timestamp) + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0",
    );
    expect(retentionStatement('crash_occurrences', 'occurred_at', undefined, 'flightrec')).toBe(
      "ALTER TABLE crash_occurrences_local ON CLUSTER 'flightrec' REMOVE TTL",
    );
    expect(retentionStatement('events', 'timestamp', 30)).toBe(
      'ALTER TABLE events MODIFY TTL toDateTime(timestamp) + INTERVAL 30 DAY SETTINGS materialize_ttl_after_modify = 0',
    );
    const known = new Set(['events']);
    expect(clusterStatements('ALTER TABLE events ADD COLUMN IF NOT EXISTS x String', 'c', known)).toEqual([
      "ALTER TABLE events_local ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS x String",
      "ALTER TABLE events ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS x String",
    ]);
    expect(clusterStatements('DROP TABLE IF EXISTS events', 'c', known)).toEqual([
      "DROP TABLE IF EXISTS events ON CLUSTER 'c' SYNC",
      "DROP TABLE IF EXISTS events_local ON CLUSTER 'c' SYNC",
    ]);
  });

  it('refuses what it cannot place: a table with no shard key, an engine or statement with no cluster form', () => {
    expect(() =>
      clusterStatements(
        'CREATE TABLE IF NOT EXISTS stray (a String) ENGINE = ReplacingMergeTree ORDER BY a',
        'c',
        new Set(),
      ),
    ).toThrow(/stray has no shard key/);
    expect(() =>
      clusterStatements('CREATE TABLE IF NOT EXISTS events (a String) ENGINE = Memory', 'c', new Set()),
    ).toThrow(/engine Memory/);
    expect(() => clusterStatements('RENAME TABLE a TO b', 'c', new Set())).toThrow(/no cluster form/);
  });

  it('puts a body and the rows it makes on one shard: the same hash of the same text', async () => {
    const [r] = await ch.query<{ same: number }>(
      'SELECT cityHash64(lower({s:String})) = cityHash64(toString(toUUID({s:String}))) AS same',
      { s: '6F0E8C1A-3B5D-4E7F-9A1B-2C3D4E5F6A7B' },
    );
    expect(Number(r!.same)).toBe(1);
  });

  it('writes statements the engine parses', async () => {
    for (const s of [
      ...all,
      ...clusterBookkeeping('flightrec'),
      retentionStatement('events', 'timestamp', 7, 'flightrec'),
    ]) {
      const [r] = await ch.query<{ f: string }>('SELECT formatQuery({q:String}) AS f', { q: s });
      expect(r!.f.length, s).toBeGreaterThan(0);
    }
  });

  it('CLICKHOUSE_CLUSTER needs a ClickHouse server and a cluster name', () => {
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'c' })).toThrow(/needs CLICKHOUSE_URL/);
    expect(() => loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: "c'; DROP" })).toThrow(
      /cluster name/,
    );
    expect(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: 'flightrec' }).clickhouse?.cluster).toBe(
      'flightrec',
    );
  });
});
