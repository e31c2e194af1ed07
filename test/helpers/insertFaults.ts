import type { ClickHouse } from '../../src/stores/clickhouse/port.ts';

/**
 * Fails the store's raw inserts, as a ClickHouse that refuses rows or is away would, for as long
 * as `fault` returns an error for an insert; returns what puts the real insert back.
 */
export function failInserts(ch: ClickHouse, fault: (table: string, bytes: Buffer) => Error | null): () => void {
  const real = ch.insertBytes;
  (ch as { insertBytes: typeof ch.insertBytes }).insertBytes = async (table, bytes, format) => {
    const err = fault(table, bytes);
    if (err) throw err;
    return real.call(ch, table, bytes, format);
  };
  return () => {
    (ch as { insertBytes: typeof ch.insertBytes }).insertBytes = real;
  };
}

/** An error as ClickHouse gives for rows it cannot parse, for inserts whose bytes hold `marker`. */
export const refusingRowsWith = (marker: string) => (_table: string, bytes: Buffer) =>
  bytes.includes(marker) ? new Error('Code: 27. DB::Exception: Cannot parse input (injected)') : null;
