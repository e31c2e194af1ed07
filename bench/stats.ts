/** Latency samples of one route (ms), summarised once at the end. */
export class Latencies {
  private samples: number[] = [];
  add(ms: number) {
    this.samples.push(ms);
  }
  summary() {
    const s = Float64Array.from(this.samples).sort();
    const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : 0);
    const round = (x: number) => Math.round(x * 10) / 10;
    return {
      n: s.length,
      p50: round(at(0.5)),
      p95: round(at(0.95)),
      p99: round(at(0.99)),
      max: round(s.length ? s[s.length - 1]! : 0),
    };
  }
}

/** `--name N` from the command line: a positive number, or `fallback` when absent. */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}
