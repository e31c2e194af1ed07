/**
 * One SDK-like send: POST a body, retry 429 and 5xx (and connection failures) up to
 * `maxRetries` times, honouring Retry-After (capped) or a short exponential backoff.
 * Transport-agnostic, so the SDK's own transport can replace the undici one unchanged.
 */
export interface Transport {
  post(path: string, body: string): Promise<{ status: number; retryAfter?: string | undefined }>;
}

export interface SendOutcome {
  /** Final HTTP status, or 0 when the last attempt failed at the connection. */
  status: number;
  attempts: number;
}

const retryable = (status: number) => status === 0 || status === 429 || status >= 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function sendWithRetry(
  t: Transport,
  path: string,
  body: string,
  onAttempt: (status: number, ms: number) => void = () => {},
  maxRetries = 3,
): Promise<SendOutcome> {
  for (let attempt = 1; ; attempt++) {
    const t0 = performance.now();
    let status = 0;
    let retryAfter: string | undefined;
    try {
      ({ status, retryAfter } = await t.post(path, body));
    } catch {
      status = 0;
    }
    onAttempt(status, performance.now() - t0);
    if (!retryable(status) || attempt > maxRetries) return { status, attempts: attempt };
    const ra = Number(retryAfter);
    await sleep(Number.isFinite(ra) && ra > 0 ? Math.min(ra * 1000, 2000) : 50 * 2 ** (attempt - 1));
  }
}
