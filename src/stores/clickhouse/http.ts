import { Readable } from 'node:stream';
import { createClient } from '@clickhouse/client';
import type { ClickHouse, Params, Settings } from './port.ts';
import { ASYNC_INSERT_SETTINGS, INGEST_SETTINGS, INSERT_SETTINGS, QUERY_SETTINGS } from './port.ts';

/** A ClickHouse server over HTTP. */
export async function openClickHouseHttp(opts: {
  url: string;
  user: string;
  password: string;
  database: string;
  asyncInsert?: boolean;
  /** CLICKHOUSE_CLUSTER: inserts go through Distributed tables. */
  cluster?: string;
}): Promise<ClickHouse> {
  // On a cluster an insert answers only once every shard it touched has written its rows
  // (distributed_foreground_insert), so a 2xx still means committed, not queued on this node.
  const distributed = opts.cluster === undefined ? {} : { distributed_foreground_insert: 1 };
  const insertSettings = { ...INSERT_SETTINGS, ...distributed };
  const ingestSettings = {
    ...(opts.asyncInsert ? { ...INGEST_SETTINGS, ...ASYNC_INSERT_SETTINGS } : INGEST_SETTINGS),
    ...distributed,
  };
  const client = createClient({
    url: opts.url,
    username: opts.user,
    password: opts.password,
    database: opts.database,
    clickhouse_settings: { ...QUERY_SETTINGS, wait_end_of_query: 1 },
  });
  return {
    kind: 'http',
    async exec(sql) {
      await client.command({ query: sql });
    },
    async insert(table, rows) {
      if (rows.length === 0) return;
      await client.insert({
        table,
        values: rows as object[],
        format: 'JSONEachRow',
        clickhouse_settings: insertSettings,
      });
    },
    // `background` changes nothing here: the server's cores are not the request thread's.
    async insertBytes(table, bytes, format) {
      // The request bodies go to the server as they arrived: the client's insert() would parse
      // and re-serialise JSON rows, exec() streams the bytes under the INSERT statement.
      const r = await client.exec({
        query: `INSERT INTO ${table} FORMAT ${format}`,
        values: Readable.from([bytes], { objectMode: false }),
        clickhouse_settings: ingestSettings,
      });
      // The answer is empty; reading it to the end returns the socket to the pool.
      for await (const _ of r.stream) void _;
    },
    // The client sends QUERY_SETTINGS with every request; a query's own settings go on top.
    async query<T>(sql: string, params: Params = {}, settings?: Settings) {
      const rs = await client.query({
        query: sql,
        query_params: params,
        format: 'JSONEachRow',
        clickhouse_settings: settings,
      });
      return (await rs.json()) as T[];
    },
    // The output's bytes as the server sent them: a binary format (Parquet) must not be decoded as text.
    async queryRaw(sql, params, format, settings) {
      const r = await client.exec({
        query: `${sql}\nFORMAT ${format}`,
        query_params: params,
        clickhouse_settings: settings,
      });
      const parts: Buffer[] = [];
      for await (const c of r.stream) parts.push(Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array));
      return Buffer.concat(parts);
    },
    async ping() {
      const r = await client.ping();
      if (!r.success) throw r.error;
    },
    async close() {
      await client.close();
    },
  };
}
