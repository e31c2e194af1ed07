/**
 * A stand-in ClickHouse server for tests: ClickHouse's HTTP interface (the part
 * @clickhouse/client uses) answered by the chDB engine in this process. No ClickHouse server
 * can be installed here, so this is how the HTTP adapter (src/stores/clickhouse/http.ts) and the
 * SQL sent through it are exercised end to end. Requests are run one at a time; query
 * parameters and settings are applied with SET, as clickhouse-client does.
 * Usage: tsx test/helpers/clickhouseShim.ts <port> <dataDir>
 */
import http from 'node:http';
import { createRequire } from 'node:module';

const [portArg, dir] = process.argv.slice(2);
const { Session } = createRequire(import.meta.url)('chdb') as typeof import('chdb');
const session = new Session(dir!);

// HTTP-level options of a real server that mean nothing to the embedded engine.
const HTTP_ONLY = new Set([
  'query',
  'database',
  'query_id',
  'session_id',
  'default_format',
  'user',
  'password',
  'wait_end_of_query',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'enable_http_compression',
  'compress',
  'decompress',
  'buffer_size',
  'role',
]);

const quote = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
let chain: Promise<unknown> = Promise.resolve();

// An insert of rows in a format, its data in the body: the engine's raw insert path, as a
// server reads an HTTP insert body (the SQL text path would parse the rows as part of the query).
const RAW_INSERT = /^\s*INSERT\s+INTO\s+([A-Za-z_][\w.]*)\s+FORMAT\s+(\w+)\s*$/i;

async function run(url: URL, bytes: Buffer): Promise<{ status: number; text: string | Buffer }> {
  const sets: string[] = [];
  const settings: Record<string, string | number> = {};
  for (const [k, v] of url.searchParams) {
    if (HTTP_ONLY.has(k)) continue;
    sets.push(k.startsWith('param_') ? `SET ${k} = ${quote(v)}` : `SET ${k} = ${/^-?\d+$/.test(v) ? v : quote(v)}`);
    if (!k.startsWith('param_')) settings[k] = /^-?\d+$/.test(v) ? Number(v) : v;
  }
  const urlQuery = url.searchParams.get('query');
  const raw = urlQuery ? RAW_INSERT.exec(urlQuery) : null;
  if (raw) {
    try {
      await session.insert({
        table: raw[1]!,
        values: bytes,
        format: raw[2]! as import('chdb').RawInsertFormat,
        settings,
      });
      return { status: 200, text: '' };
    } catch (err) {
      return { status: 500, text: `Code: 1000. DB::Exception: ${(err as Error).message}` };
    }
  }
  const body = bytes.toString('utf8');
  // Any other statement: in the body, or in the URL with its data in the body.
  const sql = urlQuery ? `${urlQuery}\n${body}` : body;
  try {
    for (const s of sets) await session.queryAsync(s);
    const res = await session.queryAsync(sql, { format: 'TabSeparated' });
    // Bytes, not text: a Parquet answer is binary.
    return { status: 200, text: Buffer.from(res.bytes()) };
  } catch (err) {
    return { status: 500, text: `Code: 1000. DB::Exception: ${(err as Error).message}` };
  }
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/ping') {
    res.end('Ok.\n');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const p = chain.then(() => run(url, body));
    chain = p.catch(() => {});
    p.then(({ status, text }) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-clickhouse-summary': '{}' });
      res.end(text);
    });
  });
});
server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write('ready\n'));
