import { crc32 } from 'node:zlib';

/**
 * A spool segment is a sequence of records, each `[length u32][rows u32][crc u32][payload]`
 * (little endian), the CRC-32 covering the first eight header bytes and the payload. A record
 * cut short at the end of a segment was being written when the process died: it was never
 * acknowledged. A record whose bytes do not match their CRC with a valid record after it was
 * written and synced before that one, so it was acknowledged: it is corrupt (a bad disk byte),
 * set aside whole, and reading resumes at the next valid record.
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

/**
 * Writes a record (header, then `chunks` as its payload) into `target` at `offset`; answers the
 * offset after it. The caller has checked that it fits.
 */
export function writeRecordInto(target: Buffer, offset: number, chunks: readonly Buffer[], rows: number): number {
  let end = offset + recordHeader(chunks, rows).copy(target, offset);
  for (const c of chunks) end += c.copy(target, end);
  return end;
}

export interface SpooledRecord {
  /** The payload, as consecutive pieces (a view into a segment's bytes, or the appended pieces). */
  chunks: readonly Buffer[];
  rows: number;
}

/** A record's payload as one buffer (copied only when it is in pieces). */
export const payloadOf = (r: SpooledRecord): Buffer =>
  r.chunks.length === 1 && r.chunks[0] ? r.chunks[0] : Buffer.concat(r.chunks);

/** The end of the valid record at `off`, or -1 when its header or CRC does not hold. */
function validRecordEnd(bytes: Buffer, off: number): number {
  if (off + HEADER_BYTES > bytes.length) return -1;
  const end = off + HEADER_BYTES + bytes.readUInt32LE(off);
  if (end > bytes.length) return -1;
  const crc = crc32(bytes.subarray(off + HEADER_BYTES, end), crc32(bytes.subarray(off, off + 8)));
  return crc === bytes.readUInt32LE(off + 8) ? end : -1;
}

/** Bytes of a segment that failed their CRC between valid records: acknowledged data, lost. */
export interface CorruptSpan {
  offset: number;
  bytes: Buffer;
}

/**
 * The records of a segment's bytes; the spans that failed their CRC with a valid record after
 * them (`corrupt`), found by trying each later offset for a header and CRC that hold; and the
 * bytes of a record torn at the end (`tornBytes`). A payload is JSON text, which never holds the
 * zero bytes of a header's small length and row count, so a body cannot pass for a record.
 */
export function readRecords(bytes: Buffer): { records: SpooledRecord[]; corrupt: CorruptSpan[]; tornBytes: number } {
  const records: SpooledRecord[] = [];
  const corrupt: CorruptSpan[] = [];
  let off = 0;
  while (off < bytes.length) {
    const end = validRecordEnd(bytes, off);
    if (end >= 0) {
      records.push({ chunks: [bytes.subarray(off + HEADER_BYTES, end)], rows: bytes.readUInt32LE(off + 4) });
      off = end;
      continue;
    }
    let next = off + 1;
    while (next + HEADER_BYTES <= bytes.length && validRecordEnd(bytes, next) < 0) next++;
    if (next + HEADER_BYTES <= bytes.length) {
      corrupt.push({ offset: off, bytes: bytes.subarray(off, next) });
      off = next;
      continue;
    }
    // Nothing valid follows. A whole record (its length reaches the end exactly) was written in
    // full, and fails its CRC: corrupt. One cut short is the write a crash interrupted.
    if (off + HEADER_BYTES <= bytes.length && off + HEADER_BYTES + bytes.readUInt32LE(off) === bytes.length) {
      corrupt.push({ offset: off, bytes: bytes.subarray(off) });
      return { records, corrupt, tornBytes: 0 };
    }
    return { records, corrupt, tornBytes: bytes.length - off };
  }
  return { records, corrupt, tornBytes: 0 };
}
