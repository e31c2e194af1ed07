import zlib from 'node:zlib';
import { pipeline, Readable } from 'node:stream';
import { promisify } from 'node:util';
import type { FastifyReply, FastifyRequest } from 'fastify';

const gzipAsync = promisify(zlib.gzip);

/**
 * A 8 KiB window rather than zlib's 32 KiB: on the export bench's CSV rows level 1 ran 241 MB/s
 * against 185 for a better ratio (5.37× against 5.10×), level 6 1.5× as fast; on rows of 2.8 KB
 * stacks the same speed for 2 % more bytes (docs/bench.md). Every gzip decoder reads any window.
 */
const WINDOW_BITS = 13;

/** Whether Accept-Encoding allows gzip (q-values honoured; `*` counts). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  let gzipQ: number | undefined;
  let starQ: number | undefined;
  for (const part of String(header).split(',')) {
    const [name, ...opts] = part.trim().toLowerCase().split(';');
    const qOpt = opts.map((o) => o.trim()).find((o) => o.startsWith('q='));
    const q = qOpt === undefined ? 1 : Number(qOpt.slice(2));
    if (name === 'gzip' || name === 'x-gzip') gzipQ = Math.max(gzipQ ?? 0, Number.isFinite(q) ? q : 0);
    else if (name === '*') starQ = Number.isFinite(q) ? q : 0;
  }
  return (gzipQ ?? starQ ?? 0) > 0;
}

/**
 * Streams (the exports: up to millions of rows) are compressed at level 1 in 64 KiB pieces: on
 * the export bench's CSV, level 6 cost 1.6 µs of CPU per row for a 5.5× ratio, level 1 0.9 µs
 * for 5.1× (docs/bench.md), and the gzip thread was what bounded a gzipped export.
 */
const STREAM_GZIP: zlib.ZlibOptions = {
  level: zlib.constants.Z_BEST_SPEED,
  windowBits: WINDOW_BITS,
  chunkSize: 64 * 1024,
};
const BODY_GZIP: zlib.ZlibOptions = { windowBits: WINDOW_BITS };

/**
 * onSend hook: gzip the response when the client accepts it. Streams are piped through a gzip
 * stream, so a long export stays constant-memory; an error in the source destroys the gzip
 * stream, which makes Fastify destroy the response rather than end it.
 */
export async function gzipOnSend(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
  // Caches must key on Accept-Encoding whether or not this client asked for gzip.
  reply.header('vary', 'Accept-Encoding');
  if (payload === null || payload === undefined || !acceptsGzip(req.headers['accept-encoding'])) return payload;
  if (payload instanceof Readable) {
    reply.header('content-encoding', 'gzip');
    reply.removeHeader('content-length');
    const gz = zlib.createGzip(STREAM_GZIP);
    pipeline(payload, gz, () => {
      // Errors reach Fastify through the gzip stream; nothing more to do here.
    });
    return gz;
  }
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
    reply.header('content-encoding', 'gzip');
    reply.removeHeader('content-length');
    return gzipAsync(payload, BODY_GZIP);
  }
  return payload;
}
