import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

/**
 * A webhook receiver on 127.0.0.1 (tests that use it set WEBHOOK_ALLOW_PRIVATE=true for their
 * server only). `answers` are the statuses it gives, in turn, then 200; a failing answer carries a
 * body the delivery log must never show.
 */
export async function startReceiver() {
  const got: Received[] = [];
  const answers: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '' });
      res.statusCode = answers.shift() ?? 200;
      res.end(res.statusCode === 200 ? 'ok' : 'receiver down: internal-secret-0123');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { got, answers, url, close: () => new Promise<void>((r) => server.close(() => r())) };
}
