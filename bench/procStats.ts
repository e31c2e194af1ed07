import fs from 'node:fs';
import path from 'node:path';

const TICKS = 100; // USER_HZ on Linux

/** Memory and CPU of another process, from /proc. */
export function procSample(pid: number): { rssMb: number; hwmMb: number; cpuSec: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    // Fields after the ")" closing the command name: state is field 3, utime 14, stime 15.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      rssMb: Math.round(kb('VmRSS') / 1024),
      hwmMb: Math.round(kb('VmHWM') / 1024),
      cpuSec: (Number(f[11]) + Number(f[12])) / TICKS,
    };
  } catch {
    return undefined;
  }
}

/** Samples a process every second: peak RSS, and CPU (cores busy) over the sampled window. */
export class ProcWatcher {
  private timer: NodeJS.Timeout | undefined;
  private first: { t: number; cpuSec: number } | undefined;
  last: { t: number; rssMb: number; hwmMb: number; cpuSec: number } | undefined;
  peakRssMb = 0;

  constructor(private readonly pid: number) {}

  start() {
    const s = procSample(this.pid);
    if (s) this.first = { t: performance.now(), cpuSec: s.cpuSec };
    this.timer = setInterval(() => this.sample(), 1000);
  }

  sample() {
    const s = procSample(this.pid);
    if (!s) return;
    this.last = { t: performance.now(), ...s };
    this.peakRssMb = Math.max(this.peakRssMb, s.rssMb, s.hwmMb);
  }

  /** Average cores busy since start (1.0 = one core). */
  cpuCores(): number {
    if (!this.first || !this.last) return 0;
    return Math.round(((this.last.cpuSec - this.first.cpuSec) / ((this.last.t - this.first.t) / 1000)) * 100) / 100;
  }

  stop() {
    this.sample();
    clearInterval(this.timer);
  }
}

export const JS_THREAD = 'JS thread';

/** CPU seconds per thread name of a process (/proc/<pid>/task/*), to tell JS from engine threads. */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Thread pools are named "Name:N" or "Name-N": group them.
      // The process's first thread is its JS thread, told apart from helpers that share its name.
      const name =
        tid === String(pid)
          ? JS_THREAD
          : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[:\-_]?\d+$/, '');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / TICKS);
    } catch {
      // the thread ended between readdir and read
    }
  }
  return out;
}

/** Cores busy per thread group between two threadCpu() snapshots, largest first. */
export function threadCores(
  before: Map<string, number>,
  after: Map<string, number>,
  seconds: number,
): Record<string, number> {
  const rows = [...after].map(([k, v]) => [k, Math.round(((v - (before.get(k) ?? 0)) / seconds) * 100) / 100] as const);
  return Object.fromEntries(rows.filter(([, v]) => v >= 0.01).sort((a, b) => b[1] - a[1]));
}

/**
 * A process's JS thread (its first) by its scheduler counters (/proc/<pid>/task/<pid>/schedstat):
 * seconds on a core and seconds runnable but waiting for one. Undefined where the kernel does not
 * keep them.
 */
export function schedStat(pid: number): { runSec: number; waitSec: number } | undefined {
  try {
    const [run, wait] = fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ');
    return { runSec: Number(run) / 1e9, waitSec: Number(wait) / 1e9 };
  } catch {
    return undefined;
  }
}

/**
 * Of each second between two schedStat() snapshots, how long the thread ran and how long it was
 * ready but waited for a core (ms): on a machine whose cores are all busy, the second is the
 * latency no code on the thread can remove.
 */
export function schedShare(
  before: ReturnType<typeof schedStat>,
  after: ReturnType<typeof schedStat>,
  seconds: number,
): { ranMsPerSecond: number; waitedForCoreMsPerSecond: number } | null {
  if (!before || !after || seconds <= 0) return null;
  const per = (x: number) => Math.round((x * 1000) / seconds);
  return {
    ranMsPerSecond: per(after.runSec - before.runSec),
    waitedForCoreMsPerSecond: per(after.waitSec - before.waitSec),
  };
}

export function statusMb(pid: number): Record<string, number> {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const out: Record<string, number> = {};
  for (const k of ['VmRSS', 'VmHWM', 'RssAnon', 'RssFile'])
    out[k] = Math.round(Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0) / 1024);
  return out;
}
/**
 * The process's resident memory by mapping (BENCH_MEM_SMAPS=1), taken at peak RSS: file-backed by
 * file (libchdb.so's code), anonymous by the mapping's size, which sorts them roughly by owner:
 * under 8 MB V8's heap pages and large malloc'd buffers, 8–64 MB malloc arenas, thread stacks and
 * chDB's allocator, 64 MB–1 GB PGlite's WebAssembly memory; `[heap]` is glibc's main heap.
 */
export function smapsByKind(pid: number): Record<string, number> {
  const text = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const out = new Map<string, number>();
  let label = '';
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const size = (Number.parseInt(head[2] as string, 16) - Number.parseInt(head[1] as string, 16)) / 1048576;
      const file = head[3] ?? '';
      label = file ? path.basename(file) : size >= 64 ? 'anon 64 MB–1 GB' : size >= 8 ? 'anon 8–64 MB' : 'anon < 8 MB';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out.set(label, (out.get(label) ?? 0) + Number(rss[1]) / 1024);
  }
  return Object.fromEntries(
    [...out]
      .filter(([, v]) => v >= 2)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, Math.round(v)]),
  );
}
