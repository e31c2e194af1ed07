/**
 * The client side of the reliability tests: the SDK's own transport (sdk/src/transport.ts), so
 * the service is driven exactly as apps drive it: one serialised body sent byte-identical on
 * every attempt, 429/5xx/network failures retried, other 4xx never. Where the SDK keeps a batch
 * whose retries ran out and sends it again on its next cycle, this loops the same way until a
 * 2xx or the deadline. Delays are shortened (the same policy, faster) so a test run stays short.
 */
import { Transport, type FetchLike } from '../../sdk/src/transport.ts';
import { sleep } from '../helpers/wait.ts';

export interface Sent {
  status: number;
  body: unknown;
  /** attempts made, 1 when the first one was answered 2xx */
  attempts: number;
}

export interface RetryOptions {
  /** Give up (throw) after this long. The tests retry "until 2xx", bounded so a hang fails loudly. */
  deadlineMs?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per-attempt timeout, so a request to a killed process does not hang. */
  attemptTimeoutMs?: number;
  /** Called for every attempt that was not a 2xx (for counting 5xx and connection errors). */
  onRetry?: (what: { status: number | 'network'; path: string; error?: string; body?: unknown }) => void;
}

export class PermanentError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    path: string,
  ) {
    super(`${path} answered ${status}: ${JSON.stringify(body)}`);
  }
}

export async function sendWithRetry(
  baseUrl: string | (() => string),
  path: string,
  body: unknown,
  headers: { authorization: string },
  opts: RetryOptions = {},
): Promise<Sent> {
  const { deadlineMs = 120_000, baseDelayMs = 50, maxDelayMs = 1000, attemptTimeoutMs = 15_000 } = opts;
  const deadline = Date.now() + deadlineMs;
  const payload = JSON.stringify(body);
  const apiKey = headers.authorization.replace(/^Bearer\s+/i, '');
  const delays = [1, 2, 4].map((f) => Math.min(maxDelayMs, baseDelayMs * f));
  // A connection failure is reported by its code (ECONNREFUSED, UND_ERR_SOCKET, ...).
  const code = (error: string) => /\b(E[A-Z]{3,}|UND_ERR_[A-Z_]+)\b/.exec(error)?.[1] ?? error;
  // The transport reports failures as text; the tests check the error body's shape, so the raw
  // body of the last answer is kept as it came.
  let lastBody: unknown;
  const keepBody: FetchLike = async (input, init) => {
    const res = await fetch(input, init);
    const text = await res.text();
    try {
      lastBody = JSON.parse(text);
    } catch {
      lastBody = text;
    }
    return new Response(text, { status: res.status, headers: res.headers });
  };
  const report = (status: number | undefined, error: string) =>
    opts.onRetry?.(
      status === undefined ? { status: 'network', path, error: code(error) } : { status, path, body: lastBody },
    );
  let attempts = 0;
  for (let cycle = 0; ; cycle++) {
    const transport = new Transport({
      endpoint: typeof baseUrl === 'function' ? baseUrl() : baseUrl,
      apiKey,
      fetch: keepBody,
      retryDelaysMs: delays,
      timeoutMs: attemptTimeoutMs,
      onRetry: (i) => report(i.status, i.error),
    });
    const r = await transport.send(path, payload);
    attempts += r.attempts;
    if (r.outcome === 'sent') return { status: r.status, body: JSON.parse(r.body), attempts };
    if (r.outcome === 'rejected') throw new PermanentError(r.status, lastBody, path);
    if (r.outcome === 'failed') report(r.status, r.error);
    if (Date.now() > deadline) throw new Error(`${path}: no 2xx after ${attempts} attempts`);
    await sleep(Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(cycle, 10)));
  }
}
