import { parquetWriteBuffer } from 'hyparquet-writer';
import type { Row } from './types.ts';

/**
 * Parquet for the Postgres-backed exports (sessions, crash groups), written in this process by
 * hyparquet-writer: the rows are already in JS (they are shaped there, with event counts from
 * ClickHouse), so writing them here needs no second store, works the same with chDB, with a
 * ClickHouse server and with `--omit=optional`, and costs one pass over a bounded chunk
 * (docs/decisions.md, "Parquet"). Types are declared, never guessed, so an empty file has the
 * same schema as a full one.
 */
export type ParquetType = 'string' | 'int64' | 'double' | 'boolean' | 'timestamp';

export interface ParquetColumn {
  name: string;
  type: ParquetType;
  nullable: boolean;
}

const ELEMENT = {
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
  int64: { type: 'INT64' },
  double: { type: 'DOUBLE' },
  boolean: { type: 'BOOLEAN' },
  // UTC instants with millisecond precision, as ClickHouse writes DateTime64(3, 'UTC').
  timestamp: {
    type: 'INT64',
    converted_type: 'TIMESTAMP_MILLIS',
    logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
  },
} as const;

function value(type: ParquetType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'int64':
      return BigInt(v as number);
    case 'double':
      return Number(v);
    case 'timestamp':
      return BigInt(typeof v === 'string' ? Date.parse(v) : (v as number));
    case 'boolean':
      return Boolean(v);
    case 'string':
      return String(v);
  }
}

/** One complete Parquet file of `rows` (the export's JSON rows), typed by `columns`. */
export function parquetFile(columns: readonly ParquetColumn[], rows: readonly Row[]): Buffer {
  const schema = [
    { name: 'schema', num_children: columns.length },
    ...columns.map((c) => ({
      name: c.name,
      ...ELEMENT[c.type],
      repetition_type: c.nullable ? 'OPTIONAL' : 'REQUIRED',
    })),
  ];
  const ab = parquetWriteBuffer({
    // The schema is declared in full above; its element shapes are parquet.thrift's.
    schema: schema as Parameters<typeof parquetWriteBuffer>[0]['schema'],
    columnData: columns.map((c) => ({
      name: c.name,
      data: rows.map((r) => value(c.type, r[c.name])),
      // Offset indexes hold absolute page offsets, which a streamed file (parquetConcat.ts) drops.
      offsetIndex: false,
    })),
    rowGroupSize: Math.max(rows.length, 1),
  });
  return Buffer.from(ab);
}
