import { createClient } from '@clickhouse/client';
import type { ClickHouse, Params, Settings } from './port.ts';
import { INSERT_SETTINGS, QUERY_SETTINGS } from './port.ts';

/** A ClickHouse server over HTTP. */
export async function openClickHouseHttp(opts: {
  url: string;
  user: string;
  password: string;
  database: string;
}): Promise<ClickHouse> {
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
      await client.insert({ table, values: rows as object[], format: 'JSONEachRow', clickhouse_settings: INSERT_SETTINGS });
    },
    // The client sends QUERY_SETTINGS with every request; a query's own settings go on top.
    async query<T>(sql: string, params: Params = {}, settings?: Settings) {
      const rs = await client.query({ query: sql, query_params: params, format: 'JSONEachRow', clickhouse_settings: settings });
      return (await rs.json()) as T[];
    },
    async queryRaw(sql, params, format, settings) {
      const rs = await client.query({ query: sql, query_params: params, format: format as 'CSVWithNames', clickhouse_settings: settings });
      return Buffer.from(await rs.text());
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
