import type { LoadResult } from './load.ts';

const fmt = (n: number) => n.toLocaleString('en-US');

/** The per-route table of one load phase. */
export function routeTable(title: string, r: LoadResult): string {
  const head = ['route', 'acked', 'req/s', 'rows/s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'errors (status×n)'];
  const rows = Object.entries(r.routes).map(([k, s]) => [
    k,
    fmt(s.acked),
    fmt(s.rps),
    fmt(s.eps),
    String(s.latency.p50),
    String(s.latency.p95),
    String(s.latency.p99),
    String(s.latency.max),
    Object.entries(s.statuses)
      .map(([c, n]) => `${c}×${n}`)
      .join(' ') || '-',
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 || i === 8 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ');
  return [
    `${title} — ${r.seconds.toFixed(1)} s, ${fmt(r.eventsPerSecond)} events/s, load generator ${r.loadgenCpuPercent}% CPU`,
    line(head),
    ...rows.map(line),
  ].join('\n');
}
