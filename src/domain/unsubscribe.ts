import { createHmac, timingSafeEqual } from 'node:crypto';

// The signed unsubscribe link of an alert: it names the project and the address, and its
// signature (HMAC-SHA256 under a secret of the service) proves the service wrote it, so nobody
// can unsubscribe an address they could not read the mail of.

const sign = (secret: string, projectId: string, email: string) =>
  createHmac('sha256', secret).update(`flightrec-unsubscribe\n${projectId}\n${email}`).digest('base64url');

export function unsubscribeLink(publicUrl: string, secret: string, projectId: string, email: string): string {
  const q = new URLSearchParams({ p: projectId, e: email, s: sign(secret, projectId, email) });
  return `${publicUrl.replace(/\/$/, '')}/api/alert-recipients/unsubscribe?${q.toString()}`;
}

export function unsubscribeSignatureValid(
  secret: string,
  projectId: string,
  email: string,
  signature: string,
): boolean {
  const a = Buffer.from(sign(secret, projectId, email));
  const b = Buffer.from(signature);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The name of the service secret that signs these links. */
export const UNSUBSCRIBE_SECRET = 'unsubscribe-links';
