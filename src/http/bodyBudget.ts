import { Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';

const HELD = Symbol('bodyBytesHeld');
const DONE = Symbol('bodyBytesReleased');
type Holder = FastifyRequest & { [HELD]?: number; [DONE]?: boolean };

const busy = () => new HttpError(503, 'Service is busy, retry shortly', undefined, { 'retry-after': '1' });

/**
 * The bytes of request bodies being received, parsed and handled at once, counted before they
 * are parsed: a parsed body takes several times its size in memory, and the write queues'
 * budgets only count a body once it is accepted. Past the bound a request is answered 503 +
 * Retry-After before its body is read (or, when its length is not known up front, a gzip or
 * chunked body, as soon as its inflated bytes pass it). A body is counted until its response
 * is sent. One request is always let in when nothing else is held, whatever its size (the body
 * limit bounds it), so a bound below the body limit cannot refuse everything.
 */
export class BodyBudget {
  bytes = 0;
  refused = 0;
  constructor(readonly maxBytes: number) {}

  private take(req: Holder, n: number): boolean {
    // An inflater may still emit after the response was sent (a bad gzip tail): not held any more.
    if (req[DONE]) return true;
    if (this.bytes > 0 && this.bytes + n > this.maxBytes) {
      this.refused++;
      return false;
    }
    this.bytes += n;
    req[HELD] = (req[HELD] ?? 0) + n;
    return true;
  }

  /** preParsing hook, after any inflating: the body stream it returns is the one parsed. */
  readonly preParsing = async (req: FastifyRequest, _reply: FastifyReply, payload: NodeJS.ReadableStream) => {
    const length = Number(req.headers['content-length']);
    // (A Content-Length that is not a count of bytes is Fastify's to refuse; it counts as unknown here.)
    const encoded = String(req.headers['content-encoding'] ?? 'identity')
      .toLowerCase()
      .trim();
    if (Number.isSafeInteger(length) && length >= 0 && (encoded === 'identity' || encoded === '')) {
      if (!this.take(req, length)) throw busy();
      return payload;
    }
    const counter = new Transform({
      transform: (chunk: Buffer, _enc, cb) => (this.take(req, chunk.length) ? cb(null, chunk) : cb(busy())),
    });
    payload.on('error', (err) => counter.destroy(err));
    // Fastify listens while it reads the body; an error after it stopped (the response already
    // sent) must not become an uncaught exception.
    counter.on('error', () => {});
    // Fastify checks Content-Length against the encoded bytes the inflater counted (bodyDecoding.ts).
    Object.defineProperty(counter, 'receivedEncodedLength', {
      get: () => (payload as { receivedEncodedLength?: number }).receivedEncodedLength,
    });
    return payload.pipe(counter);
  };

  /** onResponse and onRequestAbort hooks: the body's bytes are no longer held. */
  readonly release = async (req: FastifyRequest) => {
    const r = req as Holder;
    this.bytes -= r[HELD] ?? 0;
    r[HELD] = 0;
    r[DONE] = true;
  };
}
