import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { dashboardProject, signup, type Account } from '../helpers/accounts.ts';
import { crash, sessionStart, T0 } from '../helpers/payloads.ts';
import { mergePlan } from '../../src/domain/crashGroupMerge.ts';
import { busyGroups } from '../../src/repos/crashOccurrences.ts';
import { crashGroupsRepo } from '../../src/repos/crashGroups/index.ts';

// Merging crash groups by hand, over HTTP and the real stores (Postgres for the groups and their
// keys, ClickHouse for the occurrences): the merged group's keys lead to the kept group, its
// occurrences, devices, releases and history join it, and it leaves the lists.

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

type Auth = { authorization: string };
let ts = T0 + 10_000;

async function session(auth: Auth, device: { appVersion: string; model: string }): Promise<string> {
  const st = sessionStart();
  Object.assign(st.device, device);
  const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: st });
  expect(r.statusCode).toBe(201);
  return st.sessionId;
}

async function occur(auth: Auth, sessionId: string, stackTrace: string, message = 'TypeError: x is undefined') {
  const r = await s.app.inject({
    method: 'POST',
    url: '/ingest/crash',
    headers: auth,
    payload: crash(sessionId, { stackTrace, message, timestamp: ts++ }),
  });
  expect(r.statusCode).toBe(201);
}

const STACK_A =
  'TypeError: x is undefined\n    at renderCart (https://shop.example/app.js:10:5)\n    at commit (https://shop.example/app.js:90:1)';
const STACK_B =
  'TypeError: y is undefined\n    at loadOrders (https://shop.example/orders.js:3:9)\n    at boot (https://shop.example/main.js:1:1)';
const STACK_C = 'RangeError: bad length\n    at grow (https://shop.example/buf.js:7:7)';

async function groupIds(projectId: string): Promise<Map<string, string>> {
  const r = await (await s.stores()).pg.query<{ id: string; message: string }>(
    'SELECT id, message FROM crash_groups WHERE project_id = $1',
    [projectId],
  );
  return new Map(r.rows.map((x) => [x.message, x.id]));
}

describe('merging in the dashboard', () => {
  let alice: Account;
  let projectId: string;
  let auth: Auth;
  let a: string;
  let b: string;
  let c: string;
  let sessionB: string;
  const dash = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    s.app.inject({
      method,
      url: `/api/dashboard/projects/${projectId}${url}`,
      headers: alice.headers,
      ...(payload ? { payload } : {}),
    });

  beforeAll(async () => {
    alice = await signup(s);
    ({ projectId, auth } = await dashboardProject(s, alice));
    const s1 = await session(auth, { appVersion: '1.0', model: 'iPhone15,2' });
    sessionB = await session(auth, { appVersion: '1.1', model: 'Pixel 8' });
    const s3 = await session(auth, { appVersion: '1.1', model: 'Pixel 7' });
    await occur(auth, s1, STACK_A);
    await occur(auth, s1, STACK_A);
    await occur(auth, sessionB, STACK_B, 'TypeError: y is undefined');
    await occur(auth, s3, STACK_B, 'TypeError: y is undefined');
    await occur(auth, s3, STACK_C, 'RangeError: bad length');
    const ids = await groupIds(projectId);
    a = ids.get('TypeError: x is undefined')!;
    b = ids.get('TypeError: y is undefined')!;
    c = ids.get('RangeError: bad length')!;
    expect([a, b, c].every(Boolean)).toBe(true);
    // a status change of B, to see its history join A
    expect((await dash('PATCH', `/crash-groups/${b}`, { status: 'acknowledged' })).statusCode).toBe(200);
  });

  it("joins the merged group's occurrences, devices, releases and history to the kept one, which it leaves the lists for", async () => {
    const releases = async () =>
      (await dash('GET', '/releases?from=2026-01-01&to=2026-01-02')).json().data as {
        appVersion: string;
        newGroups: number;
      }[];
    const newIn = async (v: string) => (await releases()).find((r) => r.appVersion === v)?.newGroups;
    expect(await newIn('1.1')).toBe(2);

    const r = await dash('POST', `/crash-groups/${a}/merge`, { groupIds: [b] });
    expect(r.statusCode).toBe(200);
    const kept = r.json();
    expect(kept.id ?? kept.group?.id).toBe(a);

    const page = (await dash('GET', `/crash-groups/${a}`)).json();
    const g = page.group ?? page;
    expect(g).toMatchObject({ id: a, occurrenceCount: 4, affectedDevices: 3 });
    expect(g.appVersions).toEqual(['1.0', '1.1']);

    // the merged group's id answers with the kept group
    const viaB = (await dash('GET', `/crash-groups/${b}`)).json();
    expect((viaB.group ?? viaB).id).toBe(a);

    const list = (await dash('GET', '/crash-groups')).json();
    expect(list.data.map((x: { id: string }) => x.id).sort()).toEqual([a, c].sort());

    const occurrences = (await dash('GET', `/crash-groups/${a}/occurrences`)).json();
    expect(occurrences.data).toHaveLength(4);
    expect(occurrences.total ?? occurrences.pagination?.total).toBe(4);

    // B is no longer new in 1.1: its occurrences are the kept group's, first seen in 1.0
    expect(await newIn('1.1')).toBe(1);

    const history = (await dash('GET', `/crash-groups/${a}/history`)).json().history as {
      kind: string;
      detail: string | null;
      toStatus: string | null;
    }[];
    expect(history.map((h) => h.kind)).toEqual(['status', 'merge']);
    expect(history[1]!.detail).toBe(b);

    // the session of a merged group's crash shows the kept group
    const sess = JSON.stringify((await dash('GET', `/sessions/${sessionB}`)).json());
    expect(sess).toContain(a);
    expect(sess).not.toContain(b);
  });

  it('records a later crash of the merged group in the kept one: no new group, no new alert', async () => {
    const outbox = async () =>
      Number(
        (
          await (
            await s.stores()
          ).pg.query<{ n: string }>('SELECT count(*) AS n FROM alert_outbox WHERE project_id = $1', [projectId])
        ).rows[0]!.n,
      );
    const before = await outbox();
    const groupsBefore = (await groupIds(projectId)).size;
    const s4 = await session(auth, { appVersion: '1.2', model: 'Pixel 9' });
    await occur(auth, s4, STACK_B, 'TypeError: y is undefined');
    expect((await groupIds(projectId)).size).toBe(groupsBefore);
    expect(await outbox()).toBe(before);
    const g = (await dash('GET', `/crash-groups/${a}`)).json();
    expect(g.group ?? g).toMatchObject({ id: a, occurrenceCount: 5, affectedDevices: 4 });
  });

  it('answers 422 for an unknown group and 404 for an unknown kept group, changing nothing', async () => {
    const bad = await dash('POST', `/crash-groups/${a}/merge`, { groupIds: [c, randomUUID()] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details.map((d: { path: string }) => d.path)).toEqual(['/groupIds/1']);
    expect((await dash('GET', '/crash-groups')).json().data).toHaveLength(2);
    expect((await dash('POST', `/crash-groups/${randomUUID()}/merge`, { groupIds: [c] })).statusCode).toBe(404);
    expect((await dash('POST', `/crash-groups/${a}/merge`, { groupIds: [] })).statusCode).toBe(422);
    expect((await dash('POST', `/crash-groups/${a}/merge`, { groupIds: ['nope'] })).statusCode).toBe(422);
    // merging what is already merged (a retry) changes nothing
    const again = await dash('POST', `/crash-groups/${a}/merge`, { groupIds: [b, a] });
    expect(again.statusCode).toBe(200);
    const history = (await dash('GET', `/crash-groups/${a}/history`)).json().history as { kind: string }[];
    expect(history.filter((h) => h.kind === 'merge')).toHaveLength(1);
    // another team cannot merge this project's groups
    const mallory = await signup(s);
    const theft = await s.app.inject({
      method: 'POST',
      url: `/api/dashboard/projects/${projectId}/crash-groups/${a}/merge`,
      headers: mallory.headers,
      payload: { groupIds: [c] },
    });
    expect(theft.statusCode).toBe(404);
  });
});

describe('merging in the management API', () => {
  it('merges into the kept group and answers with it; merging the kept group later carries its merged groups along', async () => {
    const p = await s.createProject();
    const sid = await session(p.auth, { appVersion: '2.0', model: 'iPad' });
    await occur(p.auth, sid, STACK_A);
    await occur(p.auth, sid, STACK_B, 'TypeError: y is undefined');
    await occur(p.auth, sid, STACK_C, 'RangeError: bad length');
    const ids = await groupIds(p.projectId);
    const [a, b, c] = ['TypeError: x is undefined', 'TypeError: y is undefined', 'RangeError: bad length'].map(
      (m) => ids.get(m)!,
    );
    const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
      s.app.inject({
        method,
        url: `/api/projects/${p.projectId}${url}`,
        headers: s.admin,
        ...(payload ? { payload } : {}),
      });

    const r = await api('POST', `/crash-groups/${b}/merge`, { groupIds: [a] });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ id: b, occurrenceCount: 2 });
    // then B itself into C: A follows
    const r2 = await api('POST', `/crash-groups/${c}/merge`, { groupIds: [b] });
    expect(r2.json()).toMatchObject({ id: c, occurrenceCount: 3 });
    expect((await api('GET', `/crash-groups/${a}`)).json().id).toBe(c);
    const merged = await (await s.stores()).pg.query<{ id: string; merged_into: string | null }>(
      'SELECT id, merged_into FROM crash_groups WHERE project_id = $1',
      [p.projectId],
    );
    expect(Object.fromEntries(merged.rows.map((x) => [x.id, x.merged_into]))).toEqual({ [a!]: c, [b!]: c, [c!]: null });
    // every key leads to C
    const keys = await (await s.stores()).pg.query<{ group_id: string }>(
      'SELECT DISTINCT group_id FROM crash_group_keys WHERE project_id = $1',
      [p.projectId],
    );
    expect(keys.rows.map((x) => x.group_id)).toEqual([c]);
    // a spike rule counts the merged groups' occurrences as the kept group's
    const own = async (id: string) =>
      (
        await (
          await s.stores()
        ).pg.query<{ group_key: string }>('SELECT group_key FROM crash_groups WHERE id = $1', [id])
      ).rows[0]!.group_key;
    const aliases = await crashGroupsRepo(s.svc.stores.pg).mergedKeys(p.projectId);
    expect(await busyGroups(s.svc.stores.ch, p.projectId, T0, 3, ['fatal', 'error'], aliases)).toEqual([
      { groupKey: await own(c!), occurrences: 3 },
    ]);
    expect(await busyGroups(s.svc.stores.ch, p.projectId, T0, 3, ['fatal', 'error'])).toEqual([]);
    // status changes through a merged id move the kept group
    const moved = await s.app.inject({
      method: 'PATCH',
      url: `/api/projects/${p.projectId}/crash-groups/${a}`,
      headers: s.admin,
      payload: { status: 'resolved' },
    });
    expect(moved.json()).toMatchObject({ id: c, status: 'resolved' });
    expect(
      (
        await s.app.inject({
          method: 'POST',
          url: `/api/projects/${p.projectId}/crash-groups/${a}/merge`,
          payload: { groupIds: [c] },
        })
      ).statusCode,
    ).toBe(401);
  });
});

describe('mergePlan', () => {
  const known = new Map<string, string | null>([
    ['a', null],
    ['b', null],
    ['c', 'a'],
    ['d', 'b'],
  ]);
  it('reads merged ids as their kept group', () => {
    expect(mergePlan(known, 'a', ['b'])).toEqual({ outcome: 'ok', kept: 'a', sources: ['b'] });
    expect(mergePlan(known, 'c', ['d'])).toEqual({ outcome: 'ok', kept: 'a', sources: ['b'] });
    expect(mergePlan(known, 'a', ['c', 'a'])).toEqual({ outcome: 'ok', kept: 'a', sources: [] });
    expect(mergePlan(known, 'x', ['a'])).toEqual({ outcome: 'not-found' });
    expect(mergePlan(known, 'a', ['b', 'y', 'z'])).toEqual({ outcome: 'unknown', missing: ['y', 'z'] });
  });
});
