/**
 * The client side of the reliability tests: one POST with the SDKs' retry rule (retry network
 * errors, 429 and 5xx with exponential backoff; never retry another 4xx). Kept in one small
 * module so the SDK's own transport can replace it.
 */
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
  constructor(readonly status: number, readonly body: unknown, path: string) {
    super(`${path} answered ${status}: ${JSON.stringify(body)}`);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function sendWithRetry(
  baseUrl: string | (() => string),
  path: string,
  body: unknown,
  headers: Record<string, string>,
  opts: RetryOptions = {},
): Promise<Sent> {
  const { deadlineMs = 120_000, baseDelayMs = 50, maxDelayMs = 1000, attemptTimeoutMs = 15_000 } = opts;
  const deadline = Date.now() + deadlineMs;
  const payload = JSON.stringify(body);
  for (let attempt = 1; ; attempt++) {
    let status: number | 'network';
    let parsed: unknown;
    let error: string | undefined;
    try {
      const base = typeof baseUrl === 'function' ? baseUrl() : baseUrl;
      const res = await fetch(base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: payload,
        signal: AbortSignal.timeout(attemptTimeoutMs),
      });
      status = res.status;
      const text = await res.text();
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      if (status >= 200 && status < 300) return { status, body: parsed, attempts: attempt };
      if (status !== 429 && status < 500) throw new PermanentError(status, parsed, path);
    } catch (err) {
      if (err instanceof PermanentError) throw err;
      status = 'network';
      const e = err as { name?: string; cause?: { code?: string } };
      error = e.cause?.code ?? e.name;
    }
    opts.onRetry?.({ status, path, error, body: parsed });
    if (Date.now() > deadline) throw new Error(`${path}: no 2xx after ${attempt} attempts (last: ${status})`);
    await sleep(Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempt - 1, 10)));
  }
}
