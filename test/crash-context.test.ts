import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { crash, sessionStart, T0 } from './helpers/payloads.ts';

// The crash context over the real HTTP stack and stores: every field kept, hostile values of
// each dropped with a reason while the report itself is always accepted.
let s: TestServer;
let auth: { authorization: string };
let projectId: string;
beforeAll(async () => {
  s = await startTestServer({ RUN_WORKER: 'false' });
  ({ auth, projectId } = await s.createProject());
});
afterAll(async () => {
  await s?.close();
});

async function session(overrides: Record<string, unknown> = {}): Promise<string> {
  const st = sessionStart({ userId: 'session-user', ...overrides });
  expect((await s.app.inject({ method: 'POST', url: '/ingest/session', headers: auth, payload: st })).statusCode).toBe(201);
  return st.sessionId;
}

const post = (payload: unknown) => s.app.inject({
  method: 'POST', url: '/ingest/crash', headers: { ...auth, 'content-type': 'application/json' },
  payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
});

interface Row { environment: string; level: string; user_id: string | null; tags: Record<string, string>; context: string; breadcrumbs: string; dropped: string }
async function stored(sessionId: string): Promise<Row> {
  const rows = await s.svc.stores.ch.query<Row>(
    `SELECT environment, level, user_id, tags, context, breadcrumbs, dropped FROM crash_occurrences
     WHERE project_id = {p:String} AND session_id = {sid:UUID}`, { p: projectId, sid: sessionId });
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

export const FULL = {
  environment: 'staging',
  userId: 'user-7',
  tags: { screen: 'checkout', 'flag.new_cart': 'on' },
  context: { cart: { items: 2, coupon: null }, note: '<script>alert(1)</script>' },
  breadcrumbs: [
    { timestamp: T0 + 8000, category: 'navigation', message: 'to /cart', level: 'info' },
    { timestamp: T0 + 8500, category: 'http', message: 'POST /pay → 500', level: 'error', data: { status: 500 } },
  ],
  level: 'error',
};

describe('crash context at ingest', () => {
  it('keeps every field with the occurrence; the report user overrides the session user', async () => {
    const sid = await session();
    const r = await post(crash(sid, { ...FULL, isFatal: false, handled: true }));
    expect(r.statusCode, r.body).toBe(201);
    const row = await stored(sid);
    expect(row).toEqual({
      environment: 'staging', level: 'error', user_id: 'user-7', tags: FULL.tags,
      context: JSON.stringify(FULL.context), breadcrumbs: JSON.stringify(FULL.breadcrumbs), dropped: '',
    });
  });

  it('without the fields: the session user, the default level, empty context', async () => {
    const sid = await session();
    expect((await post(crash(sid))).statusCode).toBe(201);
    expect(await stored(sid)).toEqual({ environment: '', level: 'fatal', user_id: 'session-user', tags: {}, context: '', breadcrumbs: '', dropped: '' });
  });

  it('hostile values of every field: still 201, each dropped with a reason', async () => {
    const sid = await session();
    // Prototype keys are sent as raw JSON text: JSON.stringify of an object literal would drop them.
    const body = JSON.stringify(crash(sid, {
      environment: 'prod<script>', userId: 'u'.repeat(2000), level: 'warning',
      context: { s: 'x'.repeat(10_000) },
      breadcrumbs: [{ timestamp: 'yesterday', category: 'c', message: 'm' }, { timestamp: T0, category: 'ui', message: 'ok\u0007' }],
    })).replace('"tags"', '"unused"').replace(/}$/, ', "tags": {"__proto__": {"x": "y"}, "constructor": "z", "good": "\\u202etxt"}}');
    const r = await post(body);
    expect(r.statusCode, r.body).toBe(201);
    const row = await stored(sid);
    expect(row.environment).toBe('');
    expect(row.user_id).toBe('session-user');
    expect(row.level).toBe('fatal');
    expect(row.tags).toEqual({ good: '\u202etxt' });
    expect(row.context).toBe('');
    expect(JSON.parse(row.breadcrumbs)).toEqual([{ timestamp: T0, category: 'ui', message: 'ok\uFFFD', level: 'info' }]);
    expect(JSON.parse(row.dropped).map((d: { field: string }) => d.field)).toEqual([
      'environment', 'userId', 'tags.__proto__', 'tags.constructor', 'context', 'breadcrumbs[0]', 'level',
    ]);
  });

  it('wrong types at the top level never fail the report', async () => {
    const sid = await session();
    const r = await post(crash(sid, { environment: 5, userId: {}, tags: 'a', context: [1], breadcrumbs: { a: 1 }, level: 7 }));
    expect(r.statusCode, r.body).toBe(201);
    expect(JSON.parse((await stored(sid)).dropped)).toHaveLength(6);
  });

  it('deep nesting in context is dropped, not a 4xx or a stack overflow', async () => {
    const sid = await session();
    const deep = '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000);
    const r = await post(JSON.stringify(crash(sid)).replace(/}$/, `, "context": ${deep}}`));
    expect(r.statusCode, r.body).toBe(201);
    expect(JSON.parse((await stored(sid)).dropped)).toEqual([{ field: 'context', reason: 'nests deeper than 5 levels' }]);
  });

  it('a message (info) does not mark its session crashed', async () => {
    const sid = await session();
    expect((await post(crash(sid, { isFatal: false, handled: true, level: 'info' }))).statusCode).toBe(201);
    const r = await s.svc.stores.pg.query<{ status: string; has_crash: boolean }>(
      'SELECT status, has_crash FROM sessions WHERE project_id = $1 AND id = $2', [projectId, sid]);
    expect(r.rows[0]).toEqual({ status: 'active', has_crash: false });
    expect((await stored(sid)).level).toBe('info');
  });
});
