import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { loggableError } from '../lib/log.ts';

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
  idleMs = 60_000,
  watch?: { started(): void; ended(ok: boolean): void },
): Promise<FastifyReply> {
  const first = await chunks.next();
  // One chunk is read ahead: the store makes the next chunk while this one goes out (and through
  // gzip), instead of the two taking turns. Memory holds two chunks at most. A failure of the
  // chunk read ahead is thrown where it is awaited, below.
  let ahead = first.done ? undefined : chunks.next();
  ahead?.catch(() => {});
  // A client that stops reading stops pulling chunks once the socket's buffers are full; if no
  // chunk is pulled for idleMs, it is cut, giving back its slot, buffers and store time.
  let idle: NodeJS.Timeout | undefined;
  const waitForPull = () => {
    idle = setTimeout(() => {
      req.log.warn({ idleMs }, 'export stream cut: the client read nothing');
      reply.raw.destroy();
    }, idleMs);
  };
  async function* guarded(): AsyncGenerator<Buffer | string> {
    watch?.started();
    let ok = false;
    try {
      if (first.done) return;
      waitForPull();
      yield first.value;
      clearTimeout(idle);
      while (ahead) {
        const next = await ahead;
        if (next.done) break;
        ahead = chunks.next();
        ahead.catch(() => {});
        waitForPull();
        yield next.value;
        clearTimeout(idle);
      }
      ok = true;
    } catch (err) {
      req.log.error({ err: loggableError(err) }, 'export stream failed mid-response; connection aborted');
      reply.raw.destroy();
    } finally {
      clearTimeout(idle);
      // A response cut short stops its source (once the chunk in flight is read).
      if (!ok) await chunks.return(undefined).catch(() => {});
      watch?.ended(ok || first.done === true);
    }
  }
  reply.headers(headers);
  return reply.send(Readable.from(guarded(), { objectMode: false }));
}
