import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openChdb } from '../src/stores/clickhouse/chdb.ts';
import { applyRetention, migrateClickHouse } from '../src/stores/migrations.ts';
import { eventData, type IngestEvent } from '../src/domain/eventRows.ts';
import { eventId } from '../src/domain/ids.ts';
import { ingestLine } from '../src/repos/ingestLines.ts';
import * as P from './helpers/payloads.ts';

// The ClickHouse schema's migration path, on the real engine: a data directory written by the
// first schema (events with a stored `data` text and id) is brought to the current one with
// nothing lost, ids and `data` unchanged, and the ingest pipeline writes the same rows.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-chmig-'));
const ch = await openChdb(dir);
afterAll(async () => {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const project = '00000000-0000-4000-8000-0000000000aa';
const sid = P.sessionStart().sessionId;
const events = [
  P.navigate(sid, 0), { ...P.navigate(sid, 1), from: null }, P.tapEvent(sid, 2), P.customEvent(sid, 3), P.networkEvent(sid, 4, 502),
  { type: 'custom', sessionId: sid, timestamp: P.T0 + 5, sequenceNumber: 5, name: 'no-props' },
  { type: 'tap', sessionId: sid, timestamp: P.T0 + 6, sequenceNumber: 6, x: 411.43, y: 0 },
] as IngestEvent[];

const exported = () => ch.query<{ id: string; type: string; data: string; s: string }>(
  `SELECT id, type, data, toString(session_id) AS s FROM events FINAL WHERE project_id = {p:String} ORDER BY sequence_number`, { p: project });

describe('ClickHouse migrations', () => {
  it('moves a first-schema data directory to the current schema with nothing lost', async () => {
    const only001 = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-mig001-'));
    fs.copyFileSync(path.join('clickhouse', '001_events.sql'), path.join(only001, '001_events.sql'));
    await migrateClickHouse(ch, only001);
    // Rows as the first schema's ingestion wrote them (id and data computed by the API).
    await ch.insert('events', events.map((e) => ({
      project_id: project, session_id: e.sessionId, sequence_number: e.sequenceNumber, id: eventId(e.sessionId, e.sequenceNumber),
      type: e.type, timestamp: e.timestamp, data: eventData(e),
    })));
    await ch.insert('network_logs', [{
      project_id: project, timestamp: P.T0, id: 'b0000000-0000-4000-8000-000000000001', session_id: sid, method: 'GET', url: 'https://x/a?b=1',
      status_code: null, duration: 5, request_size: 10, response_size: null, error: 'ECONNRESET',
    }]);
    const before = await exported();

    await migrateClickHouse(ch);
    await migrateClickHouse(ch); // a second start finds nothing to do

    const after = await exported();
    expect(after.map((r) => [r.id, r.type, JSON.parse(r.data)])).toEqual(before.map((r) => [r.id, r.type, JSON.parse(r.data)]));
    expect(after.map((r) => JSON.parse(r.data))).toEqual(events.map((e) => eventData(e)));
    expect(after.map((r) => r.id)).toEqual(events.map((e) => eventId(e.sessionId, e.sequenceNumber)));
    const net = await ch.query<Record<string, unknown>>('SELECT * FROM network_logs FINAL WHERE project_id = {p:String}', { p: project });
    expect(net).toEqual([expect.objectContaining({ id: 'b0000000-0000-4000-8000-000000000001', session_id: sid, request_size: 10, response_size: null, error: 'ECONNRESET' })]);
    const tables = await ch.query<{ name: string; partition_key: string }>(
      "SELECT name, partition_key FROM system.tables WHERE database = currentDatabase() AND name IN ('events', 'network_logs', 'events_v1', 'network_logs_v1') ORDER BY name");
    expect(tables.map((t) => t.name)).toEqual(['events', 'network_logs']);
    expect(tables.every((t) => t.partition_key.includes('toYYYYMM'))).toBe(true);
  });

  it('writes through the ingest pipeline the same rows the API used to build, mirrored network events included', async () => {
    const sid2 = P.sessionStart().sessionId.toUpperCase();
    const batch = events.map((e) => ({ ...e, sessionId: sid2 }));
    const pretty = Buffer.from(JSON.stringify({ sessionId: sid2, events: batch }, null, 2));
    await ch.insertBytes('events_ingest', Buffer.concat([ingestLine(project, pretty), ingestLine(project, pretty)]), 'JSONEachRow');
    const lower = sid2.toLowerCase();
    const rows = (await exported()).filter((r) => r.s === lower);
    expect(rows.map((r) => JSON.parse(r.data))).toEqual(batch.map((e) => eventData(e)));
    expect(rows.map((r) => r.id)).toEqual(batch.map((e) => eventId(lower, e.sequenceNumber)));
    expect(rows.every((r) => !r.data.includes('\n'))).toBe(true);
    const net = await ch.query<{ id: string; status_code: number }>('SELECT id, status_code FROM network_logs FINAL WHERE session_id = {s:String}', { s: lower });
    expect(net).toEqual([{ id: eventId(lower, 4), status_code: 502 }]);
  });

  it('applies RETENTION_DAYS as a TTL on the high-volume tables, and removes it when unset', async () => {
    const ttl = async () => (await ch.query<{ q: string }>(
      "SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name IN ('events', 'network_logs')")).map((r) => r.q.includes(' TTL '));
    await applyRetention(ch, 30);
    expect(await ttl()).toEqual([true, true]);
    await applyRetention(ch, undefined);
    expect(await ttl()).toEqual([false, false]);
  });
});
