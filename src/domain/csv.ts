/**
 * The one CSV rule set of the exports (docs/decisions.md), for rows encoded in JS. The ClickHouse-backed
 * exports produce the same bytes with ClickHouse's CSVWithNames; `FORMULA_START` and
 * `CSV_CLICKHOUSE_SETTINGS` (src/lib/clickhouseCsv.ts) are what keep the two encoders in step.
 *
 * - RFC 4180: CRLF line ends, a header row of field names, every text cell quoted (as
 *   ClickHouse does), `"` doubled inside.
 * - numbers as numbers, booleans `true`/`false`, null (and undefined) as an empty unquoted cell,
 *   objects and arrays as their JSON text.
 * - a text cell a spreadsheet would run as a formula gets a leading `'`: one that starts with a
 *   formula sign (`FORMULA_START`), perhaps after spaces or a BOM (`FORMULA_PREFIX`).
 */

/**
 * Characters that make Excel, LibreOffice or Google Sheets treat a cell as a formula when they
 * start it: the ASCII signs, their full-width forms (which some spreadsheets fold to ASCII),
 * and tab, CR and LF.
 */
export const FORMULA_START = ['=', '+', '-', '@', '\t', '\r', '\n', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20'] as const;

/**
 * Characters a spreadsheet may skip, or that a person does not see, before the formula sign
 * (` =1`, BOM + `=`): spaces of every width (U+2000–U+200A, thin U+2009, narrow U+202F, medium
 * mathematical U+205F, ideographic U+3000, no-break U+00A0), vertical tab and form feed, and the
 * invisible zero-width space, joiners and word joiner.
 */
export const FORMULA_PREFIX = [
  ' ',
  '\uFEFF',
  '\u00A0',
  '\u3000',
  '\u000B',
  '\u000C',
  '\u2000',
  '\u2001',
  '\u2002',
  '\u2003',
  '\u2004',
  '\u2005',
  '\u2006',
  '\u2007',
  '\u2008',
  '\u2009',
  '\u200A',
  '\u200B',
  '\u200C',
  '\u200D',
  '\u2060',
  '\u202F',
  '\u205F',
] as const;

export const CSV_EOL = '\r\n';

const PREFIX = new Set<string>(FORMULA_PREFIX);
const START = new Set<string>(FORMULA_START);

export function neutraliseFormula(text: string): string {
  let i = 0;
  while (i < text.length && PREFIX.has(text.charAt(i))) i++;
  return i < text.length && START.has(text.charAt(i)) ? `'${text}` : text;
}

/** The same rule as an RE2 pattern, for ClickHouse's `match` (every character as `\x{…}`). */
export function formulaPatternRe2(): string {
  // Every listed character is one UTF-16 code unit, so its code unit is its code point.
  const cls = (chars: readonly string[]) =>
    `[${chars.map((c) => `\\x{${c.charCodeAt(0).toString(16).toUpperCase()}}`).join('')}]`;
  return `^${cls(FORMULA_PREFIX)}*${cls(FORMULA_START)}`;
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
    out += `${JSON.stringify(o)}\n`;
  }
  return out;
}
