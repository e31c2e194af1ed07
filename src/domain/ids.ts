import { createHash, hash, randomBytes } from 'node:crypto';

// Fixed namespace for flightrec's name-based (v5) UUIDs; changing it would change the id of
// every mirrored network log and event, so it never changes.
const NAMESPACE = Buffer.from('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b', 'hex');

// A one-shot hash over a reused buffer is about twice as fast as a Hash object per call.
const scratch = Buffer.allocUnsafe(16 + 256);
NAMESPACE.copy(scratch);
const MAX_SCRATCH_CHARS = 85; // 256 bytes / 3 bytes per UTF-16 unit, the UTF-8 worst case
const VARIANT = '89ab89ab89ab89ab'; // RFC 4122 variant: the high bits of byte 8 become 10

/**
 * A UUID as text, any letter case (the wire's spelling; stored lower-case). The schemas' `uuid`
 * format is this, not ajv-formats' own, which also takes `urn:uuid:…`: no store reads that
 * spelling (a session started with it was a 500, a request id was stored with its prefix).
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The one UUID spelling of a hash (RFC 4122 layout, version 5): its first 32 hex digits with the
 * version digit and the variant digit put in place. `variant` is that digit (8, 9, a or b).
 */
function uuidOfHash(x: string, variant: string): string {
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-5${x.slice(13, 16)}-${variant}${x.slice(17, 20)}-${x.slice(20, 32)}`;
}

/** RFC 4122 UUID v5 of `name` in flightrec's namespace. */
export function uuidV5(name: string): string {
  const data =
    name.length <= MAX_SCRATCH_CHARS
      ? scratch.subarray(0, 16 + scratch.write(name, 16, 'utf8'))
      : Buffer.concat([NAMESPACE, Buffer.from(name, 'utf8')]);
  const x = hash('sha1', data, 'hex');
  return uuidOfHash(x, VARIANT.charAt(parseInt(x.charAt(16), 16)));
}

/**
 * A UUID fixed by its parts (SHA-256 of them, one per line): a retried job's fan-out inserts
 * the same rows (webhook deliveries), so nothing twice. Its variant digit is always `a`, as
 * the ids already stored were made.
 */
export function derivedId(...parts: string[]): string {
  return uuidOfHash(createHash('sha256').update(parts.join('\n')).digest('hex'), 'a');
}

/**
 * The one spelling of a client's UUID (a session id, a request id): lower case, whatever case it
 * arrived in. The ingest SQL applies the same rule to the raw bytes it reads (session ids read as
 * UUID, request ids through lower(): clickhouse/004_one_ingest_table.sql);
 * test/stores/clickhouse-migration.test.ts checks that the two agree.
 */
export const canonicalId = (id: string): string => id.toLowerCase();

/**
 * Identity of an event, and of the network log mirrored from a network event: one row per
 * (session, sequenceNumber), so a retried batch maps onto the rows it already wrote. ClickHouse
 * computes the same id in SQL from the canonical session id, which is what stores it: the
 * events' `id` ALIAS (clickhouse/002_ingest_pipeline.sql) and the network mirror's view
 * (clickhouse/004_one_ingest_table.sql). This function is their mirror, for the tests:
 * test/stores/clickhouse-migration.test.ts checks that both SQL expressions give its ids.
 */
export function eventId(sessionId: string, sequenceNumber: number): string {
  return uuidV5(`${sessionId}:${sequenceNumber}`);
}

/** A random token for a link or a cookie (192 bits, base64url), and the hash that is stored. */
export const randomToken = () => randomBytes(24).toString('base64url');
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
