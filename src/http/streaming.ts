import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { loggableError } from './errors.ts';

/**
 * Sends a lazily produced body. The first chunk is read before any header is set, so a store
 * that fails at once still gets a clean JSON error. After that a failure must not look like a
 * complete file: it is logged and the socket destroyed, so the client sees the chunked body
 * end without its terminating chunk (curl: "transfer closed with outstanding read data").
 */
export async function sendChunks(
  req: FastifyRequest,
  reply: FastifyReply,
  chunks: AsyncGenerator<Buffer | string>,
  headers: Record<string, string>,
): Promise<FastifyReply> {
  const first = await chunks.next();
  async function* guarded(): AsyncGenerator<Buffer | string> {
    try {
      if (first.done) return;
      yield first.value;
      for await (const c of chunks) yield c;
    } catch (err) {
      req.log.error({ err: loggableError(err) }, 'export stream failed mid-response; connection aborted');
      reply.raw.destroy();
    }
  }
  reply.headers(headers);
  return reply.send(Readable.from(guarded(), { objectMode: false }));
}
