import zlib from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';

/**
 * preParsing hook: inflates `Content-Encoding: gzip` (and deflate) bodies. The body limit then
 * applies to the inflated bytes, which is what stops a gzip bomb at the limit.
 */
export async function decodeBody(req: FastifyRequest, _reply: unknown, payload: NodeJS.ReadableStream) {
  const enc = String(req.headers['content-encoding'] ?? 'identity')
    .toLowerCase()
    .trim();
  if (enc === 'identity' || enc === '') return payload;
  const inflater =
    enc === 'gzip' || enc === 'x-gzip' ? zlib.createGunzip() : enc === 'deflate' ? zlib.createInflate() : null;
  if (!inflater) throw new HttpError(415, `Unsupported Content-Encoding "${enc}": send gzip, deflate or identity`);
  // Fastify compares Content-Length with what it received; that is the encoded length.
  const out = inflater as zlib.Gunzip & { receivedEncodedLength: number };
  out.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    out.receivedEncodedLength += chunk.length;
  });
  inflater.on('error', () => {
    // Surfaces to the client as a 400 through the content-type parser's stream error.
  });
  payload.pipe(inflater);
  return inflater;
}
