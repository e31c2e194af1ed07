import http from 'node:http';
import { deferDelayMs } from '../domain/outboxBackoff.ts';
import https from 'node:https';
import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Config } from '../config.ts';
import type { OutboxJob } from '../repos/outbox.ts';
import { webhookTarget } from '../repos/webhooks.ts';
import type { PostgresRepos } from '../repos/index.ts';
import { isPrivateAddress, isSlackUrl, signatureHeader, SIGNATURE_HEADER } from '../domain/webhooks.ts';
import { DeferJobError, PermanentJobError } from './outbox.ts';
import { openSecret } from '../lib/secretBox.ts';

/** The receiver's answer is read this far and dropped (never logged: it may be an internal service's). */
const MAX_RESPONSE_BYTES = 4096;

export interface PostResult {
  status: number;
  latencyMs: number;
  body: string;
}

/** Refuses, after DNS, an address that is private or loopback (WEBHOOK_ALLOW_PRIVATE=false). */
const publicOnly: LookupFunction = (hostname, options, callback) => {
  const refuse = (address: string) =>
    Object.assign(
      new Error(`${hostname} resolves to a private address (${address}); set WEBHOOK_ALLOW_PRIVATE=true to allow it`),
      { code: 'EPRIVATE' },
    );
  // Node asks for every address (all: true) when it races IPv4 and IPv6; answer in the shape it asked for.
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const ok = addresses.filter((a) => !isPrivateAddress(a.address));
    const [first] = ok;
    if (!first) return callback(refuse(addresses[0]?.address ?? hostname), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, ok);
    callback(null, first.address, first.family);
  });
};

/**
 * One POST, bounded: a total time budget, the answer read to MAX_RESPONSE_BYTES, no redirect
 * followed (a 3xx is a failed attempt), http(s) only. Resolves with the status, rejects on a
 * network error or timeout.
 */
export function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allowPrivate: boolean },
): Promise<PostResult> {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return Promise.reject(new Error(`unsupported protocol ${u.protocol}`));
  // An address written in the URL is connected to without a lookup, so it is checked here.
  const literal = u.hostname.replace(/^\[|\]$/g, '');
  if (!opts.allowPrivate && isIP(literal) && isPrivateAddress(literal)) {
    return Promise.reject(new Error(`${literal} is a private address; set WEBHOOK_ALLOW_PRIVATE=true to allow it`));
  }
  const client = u.protocol === 'https:' ? https : http;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = client.request(
      u,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'flightrec-webhooks',
          ...headers,
        },
        timeout: opts.timeoutMs,
        ...(opts.allowPrivate ? {} : { lookup: publicOnly }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < MAX_RESPONSE_BYTES) chunks.push(c.subarray(0, MAX_RESPONSE_BYTES - size));
          size += c.length;
          if (size >= MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () =>
          resolve({
            status: res.statusCode ?? 0,
            latencyMs: Math.round(performance.now() - started),
            body: Buffer.concat(chunks).toString('utf8'),
          });
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      },
    );
    // The whole exchange, not just idle time: a receiver trickling bytes must not hold the job.
    const budget = setTimeout(() => req.destroy(new Error(`timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`timed out after ${opts.timeoutMs} ms`)));
    req.on('error', reject);
    req.on('close', () => clearTimeout(budget));
    req.end(body);
  });
}

/**
 * What the delivery log says of a failed connection: a kind, never the socket's own words, which
 * tell an open port ("socket hang up") from a closed one (ECONNREFUSED) to whoever made the webhook.
 */
export function deliveryFailure(err: unknown): string {
  const e = err as { code?: string; message?: string } | null;
  if (e?.code === 'EPRIVATE' || /private address/.test(e?.message ?? ''))
    return 'refused: private or loopback destination';
  if (/timed out/.test(e?.message ?? '')) return 'timed out';
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return 'host not found';
  return 'connection failed';
}

export interface WebhookJobDeps {
  config: Pick<Config, 'webhooks'> & { outbox: Pick<Config['outbox'], 'maxAttempts'> };
  repos: Pick<PostgresRepos, 'pg' | 'webhooks' | 'deliveries'>;
  /** The server key the webhooks' secrets are sealed with (src/services/secretsKey.ts). */
  secretsKey: Buffer;
  /** Seconds since the epoch for the signature (tests may pin it). */
  now?: () => number;
}

/**
 * Sends one logged delivery: signed with the webhook's secret at this attempt's time, its
 * outcome written to the delivery log, a failure thrown so the outbox retries it with its
 * backoff. A 2xx is delivered; anything else (3xx included: redirects are not followed) fails
 * the attempt.
 */
export function webhookJob(d: WebhookJobDeps) {
  const { pg: db, deliveries, webhooks: hooks } = d.repos;
  const now = d.now ?? (() => Math.floor(Date.now() / 1000));
  return async (job: OutboxJob): Promise<{ note: string }> => {
    if (!job.ref) throw new PermanentJobError('webhook job without a delivery');
    const delivery = await deliveries.toSend(job.ref);
    // Deleting a webhook deletes its log: nothing left to send.
    if (!delivery) return { note: 'delivery gone with its webhook; not sent' };
    if (delivery.status === 'delivered') return { note: 'delivered by an earlier attempt' };
    const target = await webhookTarget(db, delivery.webhookId);
    if (!target?.enabled) {
      await deliveries.recordAttempt(job.ref, {
        status: 'failed',
        responseCode: null,
        latencyMs: 0,
        error: 'webhook deleted or disabled',
      });
      return { note: 'webhook deleted or disabled; not sent' };
    }
    const wait = await hooks.takeSlot(delivery.webhookId, d.config.webhooks.perMinute);
    if (wait !== null) throw new DeferJobError(deferDelayMs(wait));

    const headers: Record<string, string> = isSlackUrl(target.url)
      ? {}
      : {
          [SIGNATURE_HEADER]: signatureHeader(openSecret(d.secretsKey, target.secret), delivery.body, now()),
          'X-Flightrec-Event': delivery.event,
          'X-Flightrec-Delivery': job.ref,
        };
    const last = job.attempts >= d.config.outbox.maxAttempts;
    let res: PostResult;
    try {
      res = await postJson(target.url, delivery.body, headers, d.config.webhooks);
    } catch (err) {
      const error = deliveryFailure(err);
      await deliveries.recordAttempt(job.ref, {
        status: last ? 'failed' : 'retrying',
        responseCode: null,
        latencyMs: 0,
        error,
      });
      throw new Error(`webhook delivery failed: ${error}`);
    }
    if (res.status >= 200 && res.status < 300) {
      await deliveries.recordAttempt(job.ref, {
        status: 'delivered',
        responseCode: res.status,
        latencyMs: res.latencyMs,
        error: null,
      });
      return { note: `delivered (${res.status}) in ${res.latencyMs} ms` };
    }
    // The tenant sees the status and timing, never the receiver's answer (it may be an internal service's).
    const error = `HTTP ${res.status}`;
    await deliveries.recordAttempt(job.ref, {
      status: last ? 'failed' : 'retrying',
      responseCode: res.status,
      latencyMs: res.latencyMs,
      error,
    });
    throw new Error(`webhook answered ${error}`);
  };
}
