/**
 * One Parquet file out of several, written as a stream: a streamed export reads bounded
 * keyset chunks, each written as a complete Parquet file (by ClickHouse, or by the JS writer
 * for Postgres rows), and the client must still get one file. A Parquet file is
 * `PAR1`, its row groups' bytes, a footer (Thrift compact `FileMetaData`), the footer's length
 * and `PAR1`; row-group bytes hold no absolute offsets, so each chunk's row groups are copied
 * through as they are and only the offsets in its footer are moved. The output footer is the
 * first chunk's (schema, key-value metadata) with every chunk's row groups and the summed row
 * count. Memory holds one chunk and the row-group metadata, never the file.
 *
 * The footer is decoded generically (every Thrift field kept as read) so no field the writer
 * put there is lost in the rewrite; only the offsets below are touched.
 */

const MAGIC = Buffer.from('PAR1');

// Thrift compact protocol type ids.
const T = {
  TRUE: 1,
  FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;

type Value = number | bigint | boolean | Buffer | ListValue | Field[] | MapValue;
interface ListValue {
  elemType: number;
  items: Value[];
}
interface MapValue {
  keyType: number;
  valType: number;
  entries: [Value, Value][];
}
interface Field {
  id: number;
  type: number;
  value: Value;
}

class Reader {
  pos = 0;
  constructor(private readonly b: Buffer) {}
  byte(): number {
    const v = this.b[this.pos++];
    if (v === undefined) throw new Error('parquet footer: unexpected end');
    return v;
  }
  varint(): bigint {
    let shift = 0n,
      out = 0n;
    for (;;) {
      const x = this.byte();
      out |= BigInt(x & 0x7f) << shift;
      if ((x & 0x80) === 0) return out;
      shift += 7n;
    }
  }
  zigzag(): bigint {
    const v = this.varint();
    return (v >> 1n) ^ -(v & 1n);
  }
  bytes(n: number): Buffer {
    const out = this.b.subarray(this.pos, this.pos + n);
    if (out.length !== n) throw new Error('parquet footer: unexpected end');
    this.pos += n;
    return out;
  }
  value(type: number): Value {
    switch (type) {
      case T.TRUE:
        return true;
      case T.FALSE:
        return false;
      case T.BYTE:
        return this.byte();
      case T.I16:
      case T.I32:
        return Number(this.zigzag());
      case T.I64:
        return this.zigzag();
      case T.DOUBLE:
        return this.bytes(8);
      case T.BINARY:
        return this.bytes(Number(this.varint()));
      case T.LIST:
      case T.SET: {
        const h = this.byte();
        const elemType = h & 0x0f;
        const n = h >> 4 === 15 ? Number(this.varint()) : h >> 4;
        const items: Value[] = [];
        // Booleans inside a list are one byte each, not folded into a type id.
        for (let i = 0; i < n; i++)
          items.push(elemType === T.TRUE || elemType === T.FALSE ? this.byte() : this.value(elemType));
        return { elemType, items };
      }
      case T.MAP: {
        const n = Number(this.varint());
        if (n === 0) return { keyType: 0, valType: 0, entries: [] };
        const kv = this.byte();
        const keyType = kv >> 4,
          valType = kv & 0x0f;
        const entries: [Value, Value][] = [];
        for (let i = 0; i < n; i++) entries.push([this.value(keyType), this.value(valType)]);
        return { keyType, valType, entries };
      }
      case T.STRUCT:
        return this.struct();
      default:
        throw new Error(`parquet footer: unknown thrift type ${type}`);
    }
  }
  struct(): Field[] {
    const fields: Field[] = [];
    let last = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return fields;
      const type = h & 0x0f;
      const delta = h >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : last + delta;
      last = id;
      fields.push({ id, type, value: this.value(type) });
    }
  }
}

class Writer {
  private readonly parts: Buffer[] = [];
  private cur: number[] = [];
  private flushCur() {
    if (this.cur.length) this.parts.push(Buffer.from(this.cur));
    this.cur = [];
  }
  byte(v: number) {
    this.cur.push(v & 0xff);
  }
  varint(v: bigint) {
    for (;;) {
      if (v < 0x80n) return this.byte(Number(v));
      this.byte(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
  }
  zigzag(v: bigint) {
    this.varint(v >= 0n ? v << 1n : (-v << 1n) - 1n);
  }
  raw(b: Buffer) {
    this.flushCur();
    this.parts.push(b);
  }
  value(type: number, v: Value) {
    switch (type) {
      case T.TRUE:
      case T.FALSE:
        return;
      case T.BYTE:
        return this.byte(v as number);
      case T.I16:
      case T.I32:
        return this.zigzag(BigInt(v as number));
      case T.I64:
        return this.zigzag(v as bigint);
      case T.DOUBLE:
        return this.raw(v as Buffer);
      case T.BINARY: {
        const b = v as Buffer;
        this.varint(BigInt(b.length));
        return this.raw(b);
      }
      case T.LIST:
      case T.SET: {
        const l = v as ListValue;
        if (l.items.length < 15) this.byte((l.items.length << 4) | l.elemType);
        else {
          this.byte(0xf0 | l.elemType);
          this.varint(BigInt(l.items.length));
        }
        for (const it of l.items) {
          if (l.elemType === T.TRUE || l.elemType === T.FALSE) this.byte(it as number);
          else this.value(l.elemType, it);
        }
        return;
      }
      case T.MAP: {
        const m = v as MapValue;
        this.varint(BigInt(m.entries.length));
        if (m.entries.length === 0) return;
        this.byte((m.keyType << 4) | m.valType);
        for (const [k, x] of m.entries) {
          this.value(m.keyType, k);
          this.value(m.valType, x);
        }
        return;
      }
      case T.STRUCT:
        return this.struct(v as Field[]);
    }
  }
  struct(fields: Field[]) {
    let last = 0;
    for (const f of [...fields].sort((a, b) => a.id - b.id)) {
      const type = f.type === T.TRUE || f.type === T.FALSE ? (f.value ? T.TRUE : T.FALSE) : f.type;
      const delta = f.id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
      else {
        this.byte(type);
        this.zigzag(BigInt(f.id));
      }
      last = f.id;
      this.value(type, f.value);
    }
    this.byte(0);
  }
  buffer(): Buffer {
    this.flushCur();
    return Buffer.concat(this.parts);
  }
}

const field = (s: Field[], id: number) => s.find((f) => f.id === id);

/** Moves an i64 field by `shift` bytes, if present. */
function shiftField(s: Field[], id: number, shift: bigint) {
  const f = field(s, id);
  if (f && f.type === T.I64) f.value = (f.value as bigint) + shift;
}

// parquet.thrift field ids.
const FILE = { NUM_ROWS: 3, ROW_GROUPS: 4 };
const ROW_GROUP = { COLUMNS: 1, FILE_OFFSET: 5, ORDINAL: 7 };
// ColumnChunk: 2 file_offset, 3 meta_data, 4/5 offset index, 6/7 column index.
// ColumnMetaData: 9 data_page_offset, 10 index_page_offset, 11 dictionary_page_offset, 14 bloom_filter_offset.
const CHUNK = { FILE_OFFSET: 2, META: 3, PAGE_INDEX: [4, 5, 6, 7] };
const META_OFFSETS = [9, 10, 11, 14];

function footerOf(file: Buffer): { meta: Field[]; bodyEnd: number } {
  if (file.length < 12 || !file.subarray(0, 4).equals(MAGIC) || !file.subarray(file.length - 4).equals(MAGIC)) {
    throw new Error('not a Parquet file');
  }
  const len = file.readUInt32LE(file.length - 8);
  const bodyEnd = file.length - 8 - len;
  return { meta: new Reader(file.subarray(bodyEnd, file.length - 8)).struct(), bodyEnd };
}

/**
 * Concatenates Parquet files of one schema into one, incrementally: `start()`, then `add()`
 * for each file (returns the bytes to send), then `finish()` (the footer). The files' schemas
 * must be equal (they come from one SELECT list); the first file's footer is the template.
 */
export class ParquetConcat {
  private offset = 0n;
  private template: Field[] | undefined;
  private readonly rowGroups: Value[] = [];
  private rows = 0n;

  start(): Buffer {
    this.offset = 4n;
    return MAGIC;
  }

  add(file: Buffer): Buffer {
    const { meta, bodyEnd } = footerOf(file);
    this.template ??= meta;
    // The row groups (and any bloom filters or page indexes after them) sit between the
    // leading magic and the footer; they move from offset 4 to the current end of the output.
    const body = file.subarray(4, bodyEnd);
    const shift = this.offset - 4n;
    const groups = field(meta, FILE.ROW_GROUPS)?.value as ListValue | undefined;
    for (const g of groups?.items ?? []) {
      const rg = g as Field[];
      shiftField(rg, ROW_GROUP.FILE_OFFSET, shift);
      const ordinal = field(rg, ROW_GROUP.ORDINAL);
      if (ordinal) ordinal.value = this.rowGroups.length;
      for (const c of (field(rg, ROW_GROUP.COLUMNS)?.value as ListValue | undefined)?.items ?? []) {
        const chunk = c as Field[];
        shiftField(chunk, CHUNK.FILE_OFFSET, shift);
        // Offset indexes hold absolute page offsets inside their own Thrift bytes; rather than
        // rewrite them, the page index is dropped (readers then read whole column chunks).
        for (const id of CHUNK.PAGE_INDEX) {
          const i = chunk.findIndex((f) => f.id === id);
          if (i >= 0) chunk.splice(i, 1);
        }
        const md = field(chunk, CHUNK.META)?.value as Field[] | undefined;
        if (md) for (const id of META_OFFSETS) shiftField(md, id, shift);
      }
      this.rowGroups.push(rg);
    }
    const n = field(meta, FILE.NUM_ROWS);
    if (n) this.rows += n.value as bigint;
    this.offset += BigInt(body.length);
    return body;
  }

  finish(): Buffer {
    if (!this.template)
      throw new Error('ParquetConcat.finish() without any file: the schema comes from the first file');
    const meta = this.template
      .filter((f) => f.id !== FILE.NUM_ROWS && f.id !== FILE.ROW_GROUPS)
      .concat([
        { id: FILE.NUM_ROWS, type: T.I64, value: this.rows },
        { id: FILE.ROW_GROUPS, type: T.LIST, value: { elemType: T.STRUCT, items: this.rowGroups } },
      ]);
    const w = new Writer();
    w.struct(meta);
    const footer = w.buffer();
    const len = Buffer.alloc(4);
    len.writeUInt32LE(footer.length);
    return Buffer.concat([footer, len, MAGIC]);
  }
}

/**
 * One Parquet stream out of a stream of Parquet files (at least one: it carries the schema).
 * Nothing is yielded before the first file is read, so a store that fails at once still fails
 * before the first byte (http/streaming.ts answers that with a status code).
 */
export async function* concatParquet(files: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer> {
  const c = new ParquetConcat();
  let head: Buffer | undefined = c.start();
  for await (const f of files) {
    const body = c.add(Buffer.isBuffer(f) ? f : Buffer.from(f));
    if (head) {
      yield Buffer.concat([head, body]);
      head = undefined;
    } else if (body.length) yield body;
  }
  yield head ? Buffer.concat([head, c.finish()]) : c.finish();
}
