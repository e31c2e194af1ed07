/** Rows as an aligned text table, a header line first; a cell is cut to `max` characters. */
export function table<T>(rows: T[], columns: [string, (r: T) => unknown][], max = 60): string {
  if (!rows.length) return '(none)';
  const cell = (v: unknown) => {
    const t = v === null || v === undefined || v === '' ? '-' : Array.isArray(v) ? v.join(',') || '-' : String(v);
    const line = t.replace(/\s+/g, ' ');
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  };
  const header = columns.map(([h]) => h);
  const cells = rows.map((r) => columns.map(([, f]) => cell(f(r))));
  const widths = header.map((h, i) => cells.reduce((w, row) => Math.max(w, row[i]?.length ?? 0), h.length));
  const line = (c: string[]) => c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i] ?? 0))).join('  ');
  return [line(header), ...cells.map(line)].join('\n');
}

/** One object as "field: value" lines (nested values as compact JSON). */
export function fields(o: Record<string, unknown>): string {
  const w = Math.max(...Object.keys(o).map((k) => k.length));
  const text = (v: unknown): string => {
    if (v === null || v === undefined) return '-';
    if (Array.isArray(v) && v.every((x) => typeof x !== 'object')) return v.join(', ') || '-';
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  };
  return Object.entries(o)
    .map(([k, v]) => `${`${k}:`.padEnd(w + 1)} ${text(v)}`)
    .join('\n');
}
