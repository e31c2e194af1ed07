import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openChdb } from '../../src/stores/clickhouse/chdb.ts';
import { applyRetention, migrateClickHouse } from '../../src/stores/migrations.ts';
import type { IngestEvent } from '../../src/domain/eventRows.ts';
import { eventsBody, networkBody } from '../../src/http/schemas/ingest.ts';
import { eventId } from '../../src/domain/ids.ts';
import { ingestLine } from '../../src/repos/ingestLines.ts';
import * as P from '../helpers/payloads.ts';
import { eventData } from '../helpers/payloads.ts';

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
  P.navigate(sid, 0),
  { ...P.navigate(sid, 1), from: null },
  P.tapEvent(sid, 2),
  P.customEvent(sid, 3),
  P.networkEvent(sid, 4, 502),
  { type: 'custom', sessionId: sid, timestamp: P.T0 + 5, sequenceNumber: 5, name: 'no-props' },
  { type: 'tap', sessionId: sid, timestamp: P.T0 + 6, sequenceNumber: 6, x: 411.43, y: 0 },
] as IngestEvent[];

const exported = () =>
  ch.query<{ id: string; type: string; data: string; s: string }>(
    `SELECT id, type, data, toString(session_id) AS s FROM events FINAL WHERE project_id = {p:String} ORDER BY sequence_number`,
    { p: project },
  );

describe('ClickHouse migrations', () => {
  it('moves a first-schema data directory to the current schema with nothing lost', async () => {
    const only001 = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-mig001-'));
    fs.copyFileSync(path.join('clickhouse', '001_events.sql'), path.join(only001, '001_events.sql'));
    await migrateClickHouse(ch, only001);
    // Rows as the first schema's ingestion wrote them (id and data computed by the API).
    await ch.insert(
      'events',
      events.map((e) => ({
        project_id: project,
        session_id: e.sessionId,
        sequence_number: e.sequenceNumber,
        id: eventId(e.sessionId, e.sequenceNumber),
        type: e.type,
        timestamp: e.timestamp,
        data: eventData(e),
      })),
    );
    await ch.insert('network_logs', [
      {
        project_id: project,
        timestamp: P.T0,
        id: 'b0000000-0000-4000-8000-000000000001',
        session_id: sid,
        method: 'GET',
        url: 'https://x/a?b=1',
        status_code: null,
        duration: 5,
        request_size: 10,
        response_size: null,
        error: 'ECONNRESET',
      },
    ]);
    const before = await exported();

    await migrateClickHouse(ch);
    await migrateClickHouse(ch); // a second start finds nothing to do

    const after = await exported();
    expect(after.map((r) => [r.id, r.type, JSON.parse(r.data)])).toEqual(
      before.map((r) => [r.id, r.type, JSON.parse(r.data)]),
    );
    expect(after.map((r) => JSON.parse(r.data))).toEqual(events.map((e) => eventData(e)));
    expect(after.map((r) => r.id)).toEqual(events.map((e) => eventId(e.sessionId, e.sequenceNumber)));
    const net = await ch.query<Record<string, unknown>>(
      'SELECT * FROM network_logs FINAL WHERE project_id = {p:String}',
      { p: project },
    );
    expect(net).toEqual([
      expect.objectContaining({
        id: 'b0000000-0000-4000-8000-000000000001',
        session_id: sid,
        request_size: 10,
        response_size: null,
        error: 'ECONNRESET',
      }),
    ]);
    const tables = await ch.query<{ name: string; partition_key: string }>(
      "SELECT name, partition_key FROM system.tables WHERE database = currentDatabase() AND name IN ('events', 'network_logs', 'events_v1', 'network_logs_v1') ORDER BY name",
    );
    expect(tables.map((t) => t.name)).toEqual(['events', 'network_logs']);
    expect(tables.every((t) => t.partition_key.includes('toYYYYMM'))).toBe(true);
    const ingestTables = await ch.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE '%ingest%' ORDER BY name",
    );
    expect(ingestTables.map((t) => t.name)).toEqual(['ingest', 'ingest_events_mv', 'ingest_network_mv']);
    const settings = await ch.query<{ q: string }>(
      "SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name IN ('events', 'network_logs')",
    );
    expect(settings.map((t) => /merge_selector_base = 20\b/.test(t.q))).toEqual([true, true]);
  });

  it('fsyncs the parts of every table it writes, inserted and merged (013), so a spool segment is deleted only after its rows are on disk', async () => {
    await migrateClickHouse(ch); // nothing to do after the test above; the whole schema when run alone
    const tables = await ch.query<{ name: string; q: string }>(
      "SELECT name, create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' AND name NOT LIKE 'schema_migration%' ORDER BY name",
    );
    expect(tables.length).toBeGreaterThanOrEqual(13);
    const durable = (q: string) =>
      ['fsync_after_insert', 'fsync_part_directory', 'min_rows_to_fsync_after_merge'].every((k) =>
        new RegExp(`\\b${k} = 1\\b`).test(q),
      );
    expect(tables.filter((t) => !durable(t.q)).map((t) => t.name)).toEqual([]);
  });

  it('writes through the ingest table the same rows the API used to build, mirrored network events and requests included', async () => {
    const sid2 = P.sessionStart().sessionId.toUpperCase();
    const batch = events.map((e) => ({ ...e, sessionId: sid2 }));
    const body = Buffer.from(JSON.stringify({ sessionId: sid2, events: batch }));
    const rid = 'C0000000-0000-4000-8000-000000000001';
    const requests = Buffer.from(
      JSON.stringify({
        sessionId: sid2,
        requests: [
          {
            id: rid,
            method: 'PUT',
            url: 'https://x/r',
            statusCode: null,
            duration: 7,
            requestSize: 3,
            timestamp: P.T0 + 2000,
          },
        ],
      }),
    );
    // a retried body collapses; both routes' bodies share one insert
    await ch.insertBytes(
      'ingest',
      Buffer.concat([ingestLine(project, body), ingestLine(project, requests), ingestLine(project, body)]),
      'JSONEachRow',
    );
    const lower = sid2.toLowerCase();
    const rows = (await exported()).filter((r) => r.s === lower);
    expect(rows.map((r) => JSON.parse(r.data))).toEqual(batch.map((e) => eventData(e)));
    expect(rows.map((r) => r.id)).toEqual(batch.map((e) => eventId(lower, e.sequenceNumber)));
    const net = await ch.query<Record<string, unknown>>(
      'SELECT id, method, status_code, duration, request_size, response_size, error FROM network_logs FINAL WHERE session_id = {s:String} ORDER BY timestamp, id',
      { s: lower },
    );
    expect(net).toEqual([
      {
        id: eventId(lower, 4),
        method: batch[4]!.method,
        status_code: 502,
        duration: batch[4]!.duration,
        request_size: null,
        response_size: null,
        error: batch[4]!.error,
      },
      {
        id: rid.toLowerCase(),
        method: 'PUT',
        status_code: null,
        duration: 7,
        request_size: 3,
        response_size: null,
        error: null,
      },
    ]);
  });

  it("reads every field the ingest schemas accept: the ingest table's tuples name the same fields as src/http/schemas/ingest.ts", async () => {
    const [col] = await ch.query<{ type: string }>(
      "SELECT type FROM system.columns WHERE database = currentDatabase() AND table = 'ingest' AND name = 'body'",
    );
    const body = tupleFields(col!.type);
    expect(Object.keys(body).sort()).toEqual(
      [...new Set([...Object.keys(eventsBody.properties), ...Object.keys(networkBody.properties)])].sort(),
    );
    const inner = (t: string) => tupleFields(t.replace(/^Array\((.*)\)$/s, '$1'));
    // An event's own sessionId is not read: the API refused any that differs from the batch's.
    const eventFields = Object.keys(eventsBody.properties.events.items.properties).filter((f) => f !== 'sessionId');
    expect(Object.keys(inner(body.events!)).sort()).toEqual(eventFields.sort());
    expect(Object.keys(inner(body.requests!)).sort()).toEqual(
      Object.keys(networkBody.properties.requests.items.properties).sort(),
    );
  });

  it('applies RETENTION_DAYS as a TTL on the high-volume tables, and removes it when unset', async () => {
    const ttl = async () =>
      (
        await ch.query<{ q: string }>(
          "SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name IN ('events', 'network_logs')",
        )
      ).map((r) => r.q.includes(' TTL '));
    await applyRetention(ch, 30);
    expect(await ttl()).toEqual([true, true]);
    await applyRetention(ch, undefined);
    expect(await ttl()).toEqual([false, false]);
  });
});

/** The fields of a ClickHouse `Tuple(name Type, …)` type, by name, each with its type's text. */
function tupleFields(type: string): Record<string, string> {
  const m = /^Tuple\((.*)\)$/s.exec(type.trim());
  if (!m) throw new Error(`not a named tuple: ${type}`);
  const fields: Record<string, string> = {};
  let depth = 0;
  let start = 0;
  const text = m[1]!;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if ((c === ',' && depth === 0) || i === text.length) {
      const part = text.slice(start, i).trim();
      const space = part.indexOf(' ');
      fields[part.slice(0, space).replace(/^`(.*)`$/, '$1')] = part.slice(space + 1);
      start = i + 1;
    }
  }
  return fields;
}
