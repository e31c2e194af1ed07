/**
 * The one CSV rule set of the exports (docs/decisions.md), for rows encoded in JS. The ClickHouse-backed
 * exports produce the same bytes with ClickHouse's CSVWithNames; `FORMULA_START` and
 * `CSV_CLICKHOUSE_SETTINGS` are what keep the two encoders in step.
 *
 * - RFC 4180: CRLF line ends, a header row of field names, every text cell quoted (as
 *   ClickHouse does), `"` doubled inside.
 * - numbers as numbers, booleans `true`/`false`, null (and undefined) as an empty unquoted cell,
 *   objects and arrays as their JSON text.
 * - a text cell a spreadsheet would run as a formula gets a leading `'`.
 */

/** First characters that make Excel, LibreOffice or Google Sheets treat a cell as a formula. */
export const FORMULA_START = ['=', '+', '-', '@', '\t', '\r'] as const;

export const CSV_EOL = '\r\n';

/** Settings that make ClickHouse's CSV output follow the rules above. */
export const CSV_CLICKHOUSE_SETTINGS = {
  output_format_csv_crlf_end_of_line: 1,
  format_csv_null_representation: '',
} as const;

export function neutraliseFormula(text: string): string {
  return text.length > 0 && (FORMULA_START as readonly string[]).includes(text.charAt(0)) ? `'${text}` : text;
}

function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return quote(neutraliseFormula(value));
  return quote(neutraliseFormula(JSON.stringify(value)));
}

export function csvHeader(fields: readonly string[]): string {
  return fields.map(quote).join(',') + CSV_EOL;
}

export function csvRow(fields: readonly string[], row: Record<string, unknown>): string {
  let line = '';
  let first = true;
  for (const f of fields) {
    if (!first) line += ',';
    first = false;
    line += csvCell(row[f]);
  }
  return line + CSV_EOL;
}

export function csvRows(fields: readonly string[], rows: readonly Record<string, unknown>[]): string {
  let out = '';
  for (const r of rows) out += csvRow(fields, r);
  return out;
}

/** One JSON object per line, fields in `fields` order. */
export function ndjsonRows(fields: readonly string[], rows: readonly Record<string, unknown>[]): string {
  let out = '';
  for (const r of rows) {
    const o: Record<string, unknown> = {};
    for (const f of fields) o[f] = r[f] ?? null;
    out += JSON.stringify(o) + '\n';
  }
  return out;
}
