import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('config', () => {
  it('WEB_CONCURRENCY above 1 needs every store on a server, and says which is missing', () => {
    expect(() => loadConfig({ WEB_CONCURRENCY: '2' })).toThrow(
      /DATABASE_URL \(embedded PGlite.*CLICKHOUSE_URL.*REDIS_URL/,
    );
    expect(() => loadConfig({ WEB_CONCURRENCY: '2', DATABASE_URL: 'postgres://h/db', REDIS_URL: 'redis://h' })).toThrow(
      /needs every store on a server; set CLICKHOUSE_URL \(embedded chDB/,
    );
    const c = loadConfig({
      WEB_CONCURRENCY: '4',
      DATABASE_URL: 'postgres://h/db',
      CLICKHOUSE_URL: 'http://ch:8123',
      REDIS_URL: 'redis://h',
    });
    expect([c.webConcurrency, c.metricsPort]).toEqual([4, 9464]);
    expect(loadConfig({}).webConcurrency).toBe(1);
    expect(() => loadConfig({ WEB_CONCURRENCY: '0' })).toThrow(ConfigError);
  });
  it('defaults to embedded stores on 127.0.0.1:3000 under ./.data', () => {
    const c = loadConfig({});
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(3000);
    expect(c.dataDir.endsWith('.data')).toBe(true);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.clickhouse).toBeUndefined();
    expect(c.redisUrl).toBeUndefined();
    expect(c.rateLimits).toEqual({ ingest: 600, export: 60, auth: 20, dashboard: 300 });
    expect({ headers: c.headersTimeoutMs, request: c.requestTimeoutMs }).toEqual({ headers: 10_000, request: 30_000 });
    expect(c.exportMaxStreams).toBe(4);
    expect(c.exportIdleTimeoutMs).toBe(60_000);
    expect(c.exportChunkRows).toBe(50_000);
    expect(c.alertDigestWindowMs).toBe(300_000);
    expect(c.crashLedgerDays).toBe(30);
    expect(c.redisCommandTimeoutMs).toBe(500);
    expect(loadConfig({ CRASH_LEDGER_DAYS: '1' }).crashLedgerDays).toBe(1);
  });
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'not a url'],
    ['CLICKHOUSE_URL', 'tcp://x'],
    ['REDIS_URL', 'http://x'],
    ['ADMIN_TOKEN', 'short'],
    ['RATE_LIMIT_INGEST_PER_MIN', '0'],
    ['KEY_CACHE_TTL_MS', '9000'],
    ['ALERT_EMAIL_TO', 'not-an-address'],
    ['RUN_WORKER', 'maybe'],
    ['REDIS_KEY_PREFIX', 'has space'],
    ['REDIS_COMMAND_TIMEOUT_MS', '0'],
    ['REQUEST_TIMEOUT_MS', '5s'],
    ['HEADERS_TIMEOUT_MS', '40000'],
    ['EXPORT_MAX_STREAMS', '0'],
    ['EXPORT_IDLE_TIMEOUT_MS', '5'],
    ['ALERT_DIGEST_WINDOW_MS', '-1'],
    ['RATE_LIMIT_DASHBOARD_PER_MIN', 'many'],
    ['CRASH_LEDGER_DAYS', '0'],
    ['CRASH_LEDGER_DAYS', '30d'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
  it("bounds the spool's inserts at 2 MiB by default, and at half the ingest queue's budget", () => {
    // The engine's memory per insert grows with its bytes: the default keeps the peak RSS down.
    expect(loadConfig({}).spool?.loadBytes).toBe(2 * 1024 * 1024);
    expect(loadConfig({ SPOOL_LOAD_BYTES: String(8 * 1024 * 1024) }).spool?.loadBytes).toBe(8 * 1024 * 1024);
    expect(() =>
      loadConfig({ SPOOL_LOAD_BYTES: String(8 * 1024 * 1024), INGEST_QUEUE_BYTES: String(8 * 1024 * 1024) }),
    ).toThrow('SPOOL_LOAD_BYTES');
    expect(() => loadConfig({ SPOOL_LOAD_BYTES: '100' })).toThrow('SPOOL_LOAD_BYTES');
  });
  it('loads four times as much while the loader is behind, the crash and facts spools one size', () => {
    const c = loadConfig({});
    expect(c.spool?.backlogLoadBytes).toBe(8 * 1024 * 1024);
    expect(loadConfig({ SPOOL_LOAD_BYTES: String(1024 * 1024) }).spool?.backlogLoadBytes).toBe(4 * 1024 * 1024);
    // Never past half the ingest queue's budget, never under a plain load.
    expect(loadConfig({ INGEST_QUEUE_BYTES: String(8 * 1024 * 1024) }).spool?.backlogLoadBytes).toBe(4 * 1024 * 1024);
    expect(() => loadConfig({ SPOOL_BACKLOG_LOAD_BYTES: String(1024 * 1024) })).toThrow('SPOOL_BACKLOG_LOAD_BYTES');
    expect(c.crashPipeline?.spool.backlogLoadBytes).toBe(c.crashPipeline?.spool.loadBytes);
    expect(c.factsSpool?.backlogLoadBytes).toBe(c.factsSpool?.loadBytes);
    expect(c.factsSpool?.loadBytes).toBe(256 * 1024);
  });
  it('reads a ClickHouse server with its credentials', () => {
    const c = loadConfig({
      CLICKHOUSE_URL: 'http://ch:8123',
      CLICKHOUSE_USER: 'u',
      CLICKHOUSE_PASSWORD: 'p',
      CLICKHOUSE_DATABASE: 'db',
    });
    expect(c.clickhouse).toEqual({ url: 'http://ch:8123', user: 'u', password: 'p', database: 'db' });
  });
});
