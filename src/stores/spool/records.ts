import { crc32 } from 'node:zlib';

/**
 * A spool segment is a sequence of records, each `[length u32][rows u32][crc u32][payload]`
 * (little endian), the CRC-32 covering the first eight header bytes and the payload. A record
 * cut short by a crash, or whose bytes do not match their CRC, ends the segment: it was being
 * written when the process died, so it was never acknowledged.
 */
export const HEADER_BYTES = 12;

/** The header of a record whose payload is `chunks` concatenated (the payload is not copied). */
export function recordHeader(chunks: readonly Buffer[], rows: number): Buffer {
  const h = Buffer.allocUnsafe(HEADER_BYTES);
  let length = 0;
  for (const c of chunks) length += c.length;
  h.writeUInt32LE(length, 0);
  h.writeUInt32LE(rows, 4);
  let crc = crc32(h.subarray(0, 8));
  for (const c of chunks) crc = crc32(c, crc);
  h.writeUInt32LE(crc, 8);
  return h;
}

export interface SpooledRecord {
  /** The payload, as consecutive pieces (a view into a segment's bytes, or the appended pieces). */
  chunks: readonly Buffer[];
  rows: number;
}

/** A record's payload as one buffer (copied only when it is in pieces). */
export const payloadOf = (r: SpooledRecord): Buffer => (r.chunks.length === 1 ? r.chunks[0]! : Buffer.concat(r.chunks));

/** The records of a segment's bytes, up to the first torn or corrupt one; `tornBytes` after it. */
export function readRecords(bytes: Buffer): { records: SpooledRecord[]; tornBytes: number } {
  const records: SpooledRecord[] = [];
  let off = 0;
  while (off + HEADER_BYTES <= bytes.length) {
    const length = bytes.readUInt32LE(off);
    const end = off + HEADER_BYTES + length;
    if (end > bytes.length) break;
    const payload = bytes.subarray(off + HEADER_BYTES, end);
    if (crc32(payload, crc32(bytes.subarray(off, off + 8))) !== bytes.readUInt32LE(off + 8)) break;
    records.push({ chunks: [payload], rows: bytes.readUInt32LE(off + 4) });
    off = end;
  }
  return { records, tornBytes: bytes.length - off };
}
