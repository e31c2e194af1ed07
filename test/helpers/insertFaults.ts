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

/**
 * ClickHouse away, as the spools see it: inserts (of `tables`, or every table) fail as a refused
 * connection and the store answers no ping. `tried` counts the inserts refused; `restore()`
 * brings the store back.
 */
export function clickHouseAway(
  ch: ClickHouse,
  tables?: readonly string[],
): { tried: () => number; restore: () => void } {
  let tried = 0;
  const restoreInserts = failInserts(ch, (table) => {
    if (tables && !tables.includes(table)) return null;
    tried++;
    return new Error('connect ECONNREFUSED (injected)');
  });
  const ping = ch.ping;
  (ch as { ping: typeof ch.ping }).ping = async () => {
    throw new Error('connect ECONNREFUSED (injected)');
  };
  return {
    tried: () => tried,
    restore: () => {
      restoreInserts();
      (ch as { ping: typeof ch.ping }).ping = ping;
    },
  };
}
