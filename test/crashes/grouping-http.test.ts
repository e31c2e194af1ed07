import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crashGroupKey, crashOccurrenceId, legacyGroupKey, stackHead } from '../../src/domain/crashGrouping.ts';
import { chTime } from '../../src/repos/crashOccurrences.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { sessionStart, T0 } from '../helpers/payloads.ts';
import { dashboardProject, signup } from '../helpers/accounts.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RUN_WORKER: 'false' });
});
afterAll(async () => {
  await s?.close();
});

type Auth = { authorization: string };
let ts = T0 + 500_000;

async function session(auth: Auth): Promise<string> {
  const st = sessionStart();
  const r = await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: st });
  expect(r.statusCode).toBe(201);
  return st.sessionId;
}

async function send(auth: Auth, body: Record<string, unknown>) {
  const r = await s.app.inject({ method: 'POST', url: '/ingest/crash', headers: auth, payload: body });
  expect(r.statusCode, r.body).toBe(201);
}

const report = (sessionId: string, stackTrace: string, extra: Record<string, unknown> = {}) => ({
  sessionId,
  message: 'IllegalStateException',
  stackTrace,
  isFatal: true,
  handled: false,
  timestamp: ts++,
  ...extra,
});

async function groups(projectId: string) {
  return (
    await (
      await s.stores()
    ).pg.query<{ id: string; group_key: string }>(
      'SELECT id, group_key FROM crash_groups WHERE project_id = $1 ORDER BY first_seen_at',
      [projectId],
    )
  ).rows;
}
async function keys(projectId: string) {
  return (
    await (
      await s.stores()
    ).pg.query<{ key: string; group_id: string; rule_version: number }>(
      'SELECT key, group_id, rule_version FROM crash_group_keys WHERE project_id = $1',
      [projectId],
    )
  ).rows;
}
async function count(projectId: string, groupId: string) {
  await s.svc.crashGroups.drain();
  return (await s.svc.crashGroups.get(projectId, groupId))?.occurrenceCount;
}

const jvm = (line: number) => `java.lang.IllegalStateException: cart empty
\tat com.shop.Cart.total(Cart.kt:${line})
\tat com.shop.CartFragment.onClick(CartFragment.kt:${line + 40})
\tat android.view.View.performClick(View.java:7448)
\tat android.os.Handler.handleCallback(Handler.java:938)`;

describe('grouping on parsed frames over HTTP', () => {
  it('an upgrade does not split: a crash whose new key has no group joins its previous-rule group, which records the new key', async () => {
    const p = await s.createProject();
    // A group made before the frame rule, as migration 013 leaves it: its own key, rule 1.
    const oldId = randomUUID();
    await (await s.stores()).pg.query(
      `INSERT INTO crash_groups (id, project_id, group_key, message, stack_head, is_fatal, handled, first_seen_at, counted)
       VALUES ($1, $2, $3, 'IllegalStateException', $4, true, false, $5, false)`,
      [oldId, p.projectId, legacyGroupKey(jvm(12)), stackHead(jvm(12)), T0],
    );
    await (await s.stores()).pg.query(
      'INSERT INTO crash_group_keys (project_id, key, group_id, rule_version) VALUES ($1, $2, $3, 1)',
      [p.projectId, legacyGroupKey(jvm(12)), oldId],
    );
    const sid = await session(p.auth);
    const first = report(sid, jvm(12));
    await send(p.auth, first);
    expect(await groups(p.projectId)).toEqual([{ id: oldId, group_key: legacyGroupKey(jvm(12)) }]);
    expect((await keys(p.projectId)).sort((a, b) => a.rule_version - b.rule_version)).toEqual([
      { key: legacyGroupKey(jvm(12)), group_id: oldId, rule_version: 1 },
      { key: crashGroupKey(jvm(12), 'IllegalStateException'), group_id: oldId, rule_version: 2 },
    ]);
    // The same code two lines lower (a new release): the previous rule split it, the new key does not.
    await send(p.auth, report(sid, jvm(14)));
    // A retry of the first report: exactly once.
    await send(p.auth, first);
    expect(await groups(p.projectId)).toHaveLength(1);
    expect(await count(p.projectId, oldId)).toBe(2);
    expect(await keys(p.projectId)).toHaveLength(2);
  });

  it('a new crash opens one group under its new key, once, whatever the retries', async () => {
    const p = await s.createProject();
    const sid = await session(p.auth);
    const r = report(sid, jvm(30));
    await Promise.all([send(p.auth, r), send(p.auth, r)]);
    await send(p.auth, r);
    const g = await groups(p.projectId);
    expect(g).toEqual([{ id: expect.any(String), group_key: crashGroupKey(jvm(30), 'IllegalStateException') }]);
    expect(await keys(p.projectId)).toEqual([{ key: g[0]!.group_key, group_id: g[0]!.id, rule_version: 2 }]);
    expect(await count(p.projectId, g[0]!.id)).toBe(1);
  });

  it('a retry of a report whose first try, before the upgrade, stored its occurrence and failed before its group: one group, one occurrence', async () => {
    const p = await s.createProject();
    const sid = await session(p.auth);
    const r = report(sid, jvm(77));
    const legacy = legacyGroupKey(r.stackTrace);
    // The first try under the previous rule: its occurrence written under the v1 key, then the process died.
    await (await s.stores()).ch.insert('crash_occurrences', [
      {
        project_id: p.projectId,
        group_key: legacy,
        id: crashOccurrenceId(r),
        occurred_at: chTime(r.timestamp),
        session_id: sid,
        user_id: null,
        device_fingerprint: 'd',
        platform: 'ios',
        os_version: '17.2',
        app_version: '1.0',
        brand: null,
        model: null,
        message: r.message,
        stack_trace: r.stackTrace,
        is_fatal: true,
        handled: false,
        symbolicated_stack: '',
      },
    ]);
    await send(p.auth, r);
    await send(p.auth, r);
    const g = await groups(p.projectId);
    expect(g).toEqual([{ id: expect.any(String), group_key: legacy }]);
    expect((await keys(p.projectId)).map((k) => k.key).sort()).toEqual(
      [legacy, crashGroupKey(r.stackTrace, r.message)].sort(),
    );
    expect(await count(p.projectId, g[0]!.id)).toBe(1);
  });

  it('the fingerprint field replaces the key; {{default}} expands; an invalid value is dropped, the report accepted', async () => {
    const p = await s.createProject();
    const sid = await session(p.auth);
    const other = 'Error: gateway timeout\n    at pay (https://a.b/pay.js:1:2)';
    await send(p.auth, report(sid, jvm(1), { fingerprint: ['payments-timeout'] }));
    await send(p.auth, report(sid, other, { fingerprint: ['payments-timeout'] }));
    expect(await groups(p.projectId)).toHaveLength(1);
    await send(p.auth, report(sid, jvm(1), { fingerprint: ['{{default}}', 'eu'] }));
    await send(p.auth, report(sid, jvm(1), { fingerprint: ['{{default}}', 'us'] }));
    expect(await groups(p.projectId)).toHaveLength(3);
    for (const bad of ['x', [1, 2], Array(11).fill('a'), ['a'.repeat(201)], { a: 1 }, null]) {
      await send(p.auth, report(sid, jvm(1), { fingerprint: bad }));
    }
    // Every invalid one fell back on the default key: one more group, of five occurrences.
    const g = await groups(p.projectId);
    expect(g).toHaveLength(4);
    expect(g[3]!.group_key).toBe(crashGroupKey(jvm(1), 'IllegalStateException'));
    expect(await count(p.projectId, g[3]!.id)).toBe(6);
  });

  it("a project's in-app packages are set through PATCH and read by the key", async () => {
    const p = await s.createProject();
    const url = `/api/projects/${p.projectId}`;
    const bad = await s.app.inject({
      method: 'PATCH',
      url,
      headers: s.admin,
      payload: { inAppPackages: ['has space'] },
    });
    expect(bad.statusCode).toBe(422);
    const ok = await s.app.inject({
      method: 'PATCH',
      url,
      headers: s.admin,
      payload: { inAppPackages: ['com.android.acme.'] },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().inAppPackages ?? ok.json().project?.inAppPackages).toEqual(['com.android.acme.']);
    const sid = await session(p.auth);
    const stack = (framework: string) => `java.lang.IllegalStateException: x
\tat android.view.View.${framework}(View.java:7448)
\tat com.android.acme.Pay.go(Pay.kt:3)`;
    await send(p.auth, report(sid, stack('performClick')));
    await send(p.auth, report(sid, stack('performLongClick')));
    // Without the setting every frame reads as the framework's, and the framework frame splits them.
    expect(crashGroupKey(stack('performClick'))).not.toBe(crashGroupKey(stack('performLongClick')));
    expect(await groups(p.projectId)).toHaveLength(1);
  });

  it('the dashboard sets the in-app packages and its crash page returns the parsed frames with inApp', async () => {
    const a = await signup(s);
    const p = await dashboardProject(s, a, 'Frames');
    const url = `/api/dashboard/projects/${p.projectId}`;
    const r = await s.app.inject({
      method: 'PATCH',
      url,
      headers: a.headers,
      payload: { inAppPackages: ['com.android.acme.'] },
    });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().inAppPackages).toEqual(['com.android.acme.']);
    const list = await s.app.inject({ method: 'GET', url: '/api/dashboard/projects', headers: a.headers });
    expect(list.json().data[0].inAppPackages).toEqual(['com.android.acme.']);
    const sid = await session(p.auth);
    await send(
      p.auth,
      report(
        sid,
        'java.lang.IllegalStateException: x\n\tat android.view.View.performClick(View.java:7448)\n\tat com.android.acme.Pay.go(Pay.kt:3)',
      ),
    );
    const [g] = await groups(p.projectId);
    await s.svc.crashGroups.drain();
    const page = await s.app.inject({ method: 'GET', url: `${url}/crash-groups/${g!.id}`, headers: a.headers });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json().latest.frames).toEqual([
      { text: 'java.lang.IllegalStateException: x', frame: null },
      {
        text: '\tat android.view.View.performClick(View.java:7448)',
        frame: {
          kind: 'jvm',
          module: 'android.view.View',
          function: 'performClick',
          line: 7448,
          column: null,
          inApp: false,
        },
      },
      {
        text: '\tat com.android.acme.Pay.go(Pay.kt:3)',
        frame: { kind: 'jvm', module: 'com.android.acme.Pay', function: 'go', line: 3, column: null, inApp: true },
      },
    ]);
  });
});
