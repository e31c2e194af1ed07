import { createHmac, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/** Events a webhook can subscribe to; rule firings go to the webhooks their rule names. */
export const WEBHOOK_EVENTS = ['crash_group.new', 'crash_group.regressed', 'rule.fired'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A delivery a person asked for from the dashboard or the API, to check a receiver: never subscribed to. */
export const TEST_EVENT = 'webhook.test';

export const SIGNATURE_HEADER = 'X-Flightrec-Signature';

/**
 * Stripe's scheme: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. The timestamp in
 * the signed text lets a receiver refuse replays older than its tolerance.
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** The receiver's check, as documented in the README (also used by the tests). */
export function verifySignature(
  secret: string,
  body: string,
  header: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds || !parts.v1) return false;
  const want = Buffer.from(signatureHeader(secret, body, t).split('v1=')[1] ?? '', 'hex');
  const got = Buffer.from(parts.v1, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Slack's incoming webhooks take `{text}` only, so they get the text, not our JSON. */
export function isSlackUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' && u.hostname === 'hooks.slack.com';
  } catch {
    return false;
  }
}

/**
 * Why a webhook URL is refused, or null. Only http(s), no credentials in the URL; unless private
 * destinations are allowed, no loopback name and no private address written in the URL (a name
 * that resolves inside is refused when it is connected to, src/workers/webhookJob.ts).
 */
export function webhookUrlProblem(url: string, allowPrivate = false): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'url is not a valid URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'url must be http or https';
  if (u.username || u.password) return 'url must not carry credentials';
  if (!allowPrivate && isInsideHost(u.hostname)) return PRIVATE_DESTINATION;
  return null;
}

export const PRIVATE_DESTINATION = 'url must not point to a loopback, private or link-local address';

/** A host written in a URL that can only mean this machine or its network (the URL parser has
 * already turned `2130706433`, `0x7f.1` and `[::ffff:127.0.0.1]` into their canonical forms). */
function isInsideHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isPrivateAddress(host);
}

/**
 * Text as Slack reads it literally: `&`, `<` and `>` are its control characters (Slack's "Escaping
 * text" rules), so a crash message cannot write `<!channel>` or a link of its own choosing.
 */
export const slackEscape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The event's body: the JSON our receivers get, or Slack's `{text}` (only our own link is markup). */
export function deliveryBody(
  url: string,
  event: WebhookEvent | typeof TEST_EVENT,
  data: { text: string; link: string | null; [k: string]: unknown },
  at: Date,
): string {
  if (isSlackUrl(url)) {
    const text = slackEscape(data.text);
    return JSON.stringify({ text: data.link ? `${text}\n<${slackEscape(data.link)}|Open in flightrec>` : text });
  }
  return JSON.stringify({ event, createdAt: at.toISOString(), data });
}

/**
 * Loopback, private, link-local, unique-local, CGNAT and unspecified addresses: refused when
 * WEBHOOK_ALLOW_PRIVATE=false, checked on the address actually connected to (after DNS).
 */
export function isPrivateAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 4) {
    const [a = 0, b = 0] = address.split('.').map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      a >= 224
    );
  }
  if (v === 6) {
    const x = address.toLowerCase();
    if (x.startsWith('::ffff:')) return isPrivateAddress(x.slice(7));
    return (
      x === '::' ||
      x === '::1' ||
      x.startsWith('fc') ||
      x.startsWith('fd') ||
      x.startsWith('fe8') ||
      x.startsWith('fe9') ||
      x.startsWith('fea') ||
      x.startsWith('feb') ||
      x.startsWith('ff')
    );
  }
  return true;
}
