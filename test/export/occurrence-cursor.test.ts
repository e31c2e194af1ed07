import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { crash, sessionStart, T0 } from '../helpers/payloads.ts';
import { waitFor } from '../helpers/wait.ts';

// /export/crash-occurrences with updatedSince / cursor: occurrences in the order they arrived,
// so an ETL job resumes without gaps or duplicates, late reports of old crashes included, in
// every format. Rows are returned once they are LAG old: the pulls below poll until they are.
const LAG = 200;

let s: TestServer;
type Project = Awaited<ReturnType<TestServer['createProject']>>;
let A: Project;
let B: Project;

beforeAll(async () => {
  s = await startTestServer({
    RUN_WORKER: 'false',
    EXPORT_SYNC_LAG_MS: String(LAG),
    EXPORT_CHUNK_ROWS: '2',
    RATE_LIMIT_EXPORT_PER_MIN: '100000',
    RATE_LIMIT_INGEST_PER_MIN: '100000',
  });
  A = await s.createProject('A');
  B = await s.createProject('B');
});

afterAll(async () => {
  await s?.close();
});

const get = (p: Project, q: string) =>
  s.app.inject({ method: 'GET', url: `/export/crash-occurrences?${q}`, headers: p.auth });

let sent = 0;
/** One crash report in its own session; `at` is when it happened (late reports come with old times). */
async function report(p: Project, at: number, extra: Record<string, unknown> = {}) {
  const st = sessionStart();
  const post = async (url: string, payload: object) => {
    const r = await s.app.inject({ method: 'POST', url, headers: p.auth, payload });
    expect(r.statusCode, r.body).toBe(201);
  };
  await post('/ingest/session', st);
  sent++;
  await post('/ingest/crash', crash(st.sessionId, { timestamp: at, message: `Error: report ${sent}`, ...extra }));
}

/** Every occurrence of the project as the plain export lists it (ids). */
async function stored(p: Project): Promise<string[]> {
  const r = await get(p, 'limit=1000');
  return (r.json().data as { id: string }[]).map((x) => x.id);
}

/**
 * A job's pull: from `start`, page by page (`limit` 2) with the returned cursor and the same
 * `filters` until an empty page; `between` runs after each page (reports arriving while it pulls).
 */
async function pull(p: Project, start: string, between?: (page: number) => Promise<void>, filters = '') {
  const ids: string[] = [];
  let q = start;
  let cursor = '';
  for (let page = 0; ; page++) {
    const r = await get(p, `${q}&limit=2${filters}`);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(r.headers['x-next-cursor']).toBe(body.nextCursor);
    cursor = body.nextCursor;
    if (body.data.length === 0) return { ids, cursor };
    expect(body.data.length).toBeLessThanOrEqual(2);
    ids.push(...body.data.map((x: { id: string }) => x.id));
    q = `cursor=${encodeURIComponent(cursor)}`;
    await between?.(page);
  }
}

/** Pulls again from `cursor` until the job holds `n` rows (the newest ones come once they are LAG old). */
async function catchUp(p: Project, ids: string[], cursor: string, n: number) {
  let c = cursor;
  await waitFor('the last reports to be old enough', async () => {
    const r = await pull(p, `cursor=${encodeURIComponent(c)}`);
    ids.push(...r.ids);
    c = r.cursor;
    return ids.length >= n;
  });
  return c;
}

const once = (ids: string[]) => expect(new Set(ids).size).toBe(ids.length);

describe('GET /export/crash-occurrences in arrival order', () => {
  it('pages through every occurrence exactly once, reports arriving between pages and late ones included', async () => {
    for (let i = 0; i < 5; i++) await report(A, T0 + i * 1000);
    await report(B, T0);
    await waitFor('the first reports to be old enough', async () => {
      const r = await get(A, 'updatedSince=1970-01-01&limit=1000');
      return r.json().data.length === 5;
    });
    // A late report of a crash older than all the others, and newer ones, while the job pulls.
    const first = await pull(A, 'updatedSince=1970-01-01', async (page) => {
      if (page === 0) await report(A, T0 - 86_400_000);
      if (page === 1) await report(A, T0 + 10_000, { stackTrace: 'at other (o.js:1:1)' });
    });
    const ids = [...first.ids];
    const cursor = await catchUp(A, ids, first.cursor, 7);
    once(ids);
    expect(ids.sort()).toEqual((await stored(A)).sort());
    expect(ids).toHaveLength(7);

    // Nothing new: the cursor comes back as it was, with no row; a new report comes next time.
    const again = await get(A, `cursor=${encodeURIComponent(cursor)}&limit=2`);
    expect(again.json()).toMatchObject({ data: [], total: 0, nextCursor: cursor });
    await report(A, T0 + 20_000);
    const next: string[] = [];
    await catchUp(A, next, cursor, 1);
    expect(next).toHaveLength(1);
    expect(ids).not.toContain(next[0]);
  });

  it('resumes the same way in CSV, NDJSON and Parquet, paged or streamed', async () => {
    const all = (await stored(A)).sort();
    // CSV pages: the cursor in X-Next-Cursor
    const csvIds: string[] = [];
    let cursor = '';
    let q = 'updatedSince=1970-01-01';
    for (;;) {
      const r = await get(A, `${q}&format=csv&limit=3`);
      expect(r.statusCode, r.body).toBe(200);
      const lines = r.body.trim().split('\r\n').slice(1);
      cursor = String(r.headers['x-next-cursor']);
      if (lines.length === 0) break;
      csvIds.push(...lines.map((l) => (l.split(',')[0] ?? '').replaceAll('"', '')));
      q = `cursor=${encodeURIComponent(cursor)}`;
    }
    once(csvIds);
    expect(csvIds.sort()).toEqual(all);

    // NDJSON stream from the middle: the rows after a page's cursor, and the stream's own cursor
    const page = await get(A, 'updatedSince=1970-01-01&limit=3');
    const head = page.json().data.map((x: { id: string }) => x.id) as string[];
    const nd = await get(A, `cursor=${encodeURIComponent(page.json().nextCursor)}&stream=true&format=ndjson`);
    expect(nd.statusCode).toBe(200);
    const tail = nd.body
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    once([...head, ...tail]);
    expect([...head, ...tail].sort()).toEqual(all);
    expect(nd.headers['x-next-cursor']).toBe(cursor);

    // One Parquet file of everything, then nothing after its cursor
    const pq = await get(A, 'updatedSince=1970-01-01&stream=true&format=parquet');
    expect(pq.statusCode).toBe(200);
    const b = pq.rawPayload;
    const rows = await parquetReadObjects({
      file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer,
      compressors,
    });
    expect(rows.map((r) => String(r.id)).sort()).toEqual(all);
    const after = await get(A, `cursor=${encodeURIComponent(String(pq.headers['x-next-cursor']))}&format=ndjson`);
    expect(after.body).toBe('');
  });

  it("keeps to the key's project and to the filters, with one cursor per filter", async () => {
    const b = await pull(B, 'updatedSince=1970-01-01');
    expect(b.ids).toEqual(await stored(B));
    const late = await pull(A, 'updatedSince=1970-01-01', undefined, `&to=${new Date(T0 - 1).toISOString()}`);
    expect(late.ids).toHaveLength(1);
    const other = await pull(A, 'updatedSince=1970-01-01', undefined, '&level=fatal');
    expect(other.ids.length).toBeGreaterThan(1);
    const plain = (await get(A, 'limit=1000&level=fatal')).json().data as { id: string }[];
    expect(other.ids.sort()).toEqual(plain.map((x) => x.id).sort());
  });

  it('refuses cursors it did not return, both starts at once and page walks (400, nothing read)', async () => {
    const cursor = (await get(A, 'updatedSince=2020-01-01&limit=1')).json().nextCursor as string;
    for (const q of [
      'cursor=abc',
      `cursor=v1.${Buffer.from('12:not an id!').toString('base64url')}`,
      `cursor=v1.${Buffer.from(`x:${'a'.repeat(64)}`).toString('base64url')}`,
      `cursor=${encodeURIComponent(cursor)}&page=2`,
      `updatedSince=2020-01-01&cursor=${encodeURIComponent(cursor)}`,
      'updatedSince=yesterday',
    ]) {
      for (const format of ['json', 'csv']) {
        const r = await get(A, `${q}&format=${format}`);
        expect(r.statusCode, q).toBe(400);
        expect(r.headers['content-type']).toMatch(/application\/json/);
        expect(typeof r.json().error).toBe('string');
      }
    }
  });
});
