import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { openPglite } from '../../src/stores/postgres/pglite.ts';
import { migratePostgres } from '../../src/stores/migrations.ts';
import { crashOccurrenceId, deviceFingerprint } from '../../src/domain/crashGrouping.ts';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.ts';
import * as P from '../helpers/payloads.ts';

// Crash occurrences and device fingerprints move from Postgres to ClickHouse: a data directory
// written by the layout before postgres/006_crash_facts.sql (counters in crash_groups, occurrences
// and devices in Postgres) starts on the current code with every occurrence kept, counted once,
// and a retry of an old report still adds nothing. Embedded stores only: the scratch-database
// path of a Postgres server runs the same migration code.

const dataDir = tempDataDir();
let s: TestServer | undefined;
afterAll(async () => {
  await s?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(process.env.DATABASE_URL)('moving crash facts to ClickHouse', () => {
  it('keeps every occurrence of the Postgres layout, counted once, and drops the old tables', async () => {
    const old = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-pgmig-'));
    for (const f of fs.readdirSync('postgres').filter((f) => parseInt(f, 10) < 6))
      fs.copyFileSync(path.join('postgres', f), path.join(old, f));
    const pg = await openPglite(path.join(dataDir, 'postgres'));
    await migratePostgres(pg, old);

    const project = randomUUID();
    const group = randomUUID();
    const stackTrace = 'Error: old\n at a (a.js:1:1)';
    const sessions = [
      { id: randomUUID(), platform: 'ios', app: '1.0', model: 'iPhone' },
      { id: randomUUID(), platform: 'android', app: '1.1', model: 'Pixel' },
    ];
    await pg.query('INSERT INTO projects (id, name) VALUES ($1, $2)', [project, 'old']);
    for (const x of sessions) {
      await pg.query(
        `INSERT INTO sessions (project_id, id, user_id, platform, os_version, model, app_version, device_fingerprint, started_at, status, has_crash)
         VALUES ($1, $2, $3, $4, '17.2', $5, $6, $7, $8, 'crashed', true)`,
        [
          project,
          x.id,
          `user-${x.model}`,
          x.platform,
          x.model,
          x.app,
          deviceFingerprint({ platform: x.platform, model: x.model, osVersion: '17.2' }),
          P.T0,
        ],
      );
    }
    const reports = [
      P.crash(sessions[0]!.id, { stackTrace, timestamp: P.T0 + 1 }),
      P.crash(sessions[0]!.id, { stackTrace, timestamp: P.T0 + 2 }),
      P.crash(sessions[1]!.id, { stackTrace, timestamp: P.T0 + 3 }),
    ];
    await pg.query(
      `INSERT INTO crash_groups (id, project_id, group_key, message, stack_head, status, is_fatal, handled, occurrence_count, affected_devices,
         platform, app_version, os_version, first_seen_at, last_seen_at, app_versions, resolved_versions)
       VALUES ($1, $2, $3, 'TypeError: undefined is not a function', $4, 'resolved', true, false, 3, 2, 'android', '1.1', '17.2', $5, $6, '{1.0,1.1}', '{1.0,1.1}')`,
      [
        group,
        project,
        (await import('../../src/domain/crashGrouping.ts')).crashGroupKey(stackTrace),
        stackTrace,
        P.T0 + 1,
        P.T0 + 3,
      ],
    );
    for (const [i, c] of reports.entries()) {
      const x = sessions[i === 2 ? 1 : 0]!;
      await pg.query(
        `INSERT INTO crash_occurrences (project_id, id, group_key, session_id, device_fingerprint, app_version, occurred_at, is_fatal)
         SELECT $1, $2, group_key, $3, $4, $5, $6, true FROM crash_groups WHERE id = $7`,
        [
          project,
          crashOccurrenceId(c),
          x.id,
          deviceFingerprint({ platform: x.platform, model: x.model, osVersion: '17.2' }),
          x.app,
          c.timestamp,
          group,
        ],
      );
      await pg.query(
        'INSERT INTO crash_group_devices (group_id, device_fingerprint) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [group, deviceFingerprint({ platform: x.platform, model: x.model, osVersion: '17.2' })],
      );
    }
    await pg.close();

    s = await startTestServer({}, dataDir);
    const view = async () =>
      (
        await s!.app.inject({ method: 'GET', url: `/api/projects/${project}/crash-groups/${group}`, headers: s!.admin })
      ).json();
    expect(await view()).toMatchObject({
      id: group,
      status: 'resolved',
      occurrenceCount: 3,
      affectedDevices: 2,
      platform: 'android',
      appVersion: '1.1',
      firstSeenAt: new Date(P.T0 + 1).toISOString(),
      lastSeenAt: new Date(P.T0 + 3).toISOString(),
      appVersions: ['1.0', '1.1'],
      resolvedVersions: ['1.0', '1.1'],
    });
    const tables = await s.svc.stores.pg.query<{ t: string | null }>(
      "SELECT to_regclass('crash_occurrences_legacy')::text AS t UNION ALL SELECT to_regclass('crash_group_devices_legacy')::text",
    );
    expect(tables.rows).toEqual([{ t: null }, { t: null }]);
    const [first] = await s.svc.stores.ch.query<{ user_id: string; model: string }>(
      'SELECT user_id, model FROM crash_occurrences WHERE project_id = {p:String} ORDER BY occurred_at LIMIT 1',
      { p: project },
    );
    expect(first).toEqual({ user_id: 'user-iPhone', model: 'iPhone' });

    // The old reports, sent again, are the rows already moved; a new one from 1.1 keeps it resolved, from 1.2 reopens it.
    const k = await s.app.inject({ method: 'POST', url: `/api/projects/${project}/keys`, headers: s.admin });
    const auth = { authorization: `Bearer ${k.json().apiKey}` };
    for (const c of reports)
      expect((await s.app.inject({ method: 'POST', url: '/ingest/crash', headers: auth, payload: c })).statusCode).toBe(
        201,
      );
    expect(await view()).toMatchObject({ occurrenceCount: 3, affectedDevices: 2, status: 'resolved' });
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/ingest/crash',
          headers: auth,
          payload: P.crash(sessions[1]!.id, { stackTrace, timestamp: P.T0 + 4 }),
        })
      ).statusCode,
    ).toBe(201);
    expect(await view()).toMatchObject({ occurrenceCount: 4, status: 'resolved' });
    await s.close();
    s = await startTestServer({}, dataDir); // a second start has nothing to move
    const newer = P.sessionStart();
    newer.device.appVersion = '1.2';
    await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: newer });
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: '/ingest/crash',
          headers: auth,
          payload: P.crash(newer.sessionId, { stackTrace, timestamp: P.T0 + 5 }),
        })
      ).statusCode,
    ).toBe(201);
    expect(await view()).toMatchObject({
      occurrenceCount: 5,
      affectedDevices: 3,
      status: 'open',
      appVersion: '1.2',
      appVersions: ['1.0', '1.1', '1.2'],
    });
  });
});
