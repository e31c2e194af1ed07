import { createHash } from 'node:crypto';

// Fixed namespace for flightrec's name-based (v5) UUIDs; changing it would change the id of
// every mirrored network log and event, so it never changes.
const NAMESPACE = Buffer.from('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b', 'hex');

/** RFC 4122 UUID v5 of `name` in flightrec's namespace. */
export function uuidV5(name: string): string {
  const h = createHash('sha1').update(NAMESPACE).update(name).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/**
 * Identity of an event, and of the network log mirrored from a network event: one row per
 * (session, sequenceNumber), so a retried batch maps onto the rows it already wrote.
 */
export function eventId(sessionId: string, sequenceNumber: number): string {
  return uuidV5(`${sessionId}:${sequenceNumber}`);
}
