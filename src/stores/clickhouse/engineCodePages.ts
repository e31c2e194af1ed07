import fs from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The embedded engine's library (chDB's libchdb.so, 566 MB) runs much of its code once, at start:
 * it registers its functions, formats and settings, and the migrations run statements the
 * service never runs again. Those pages stay resident, ~220 MB of file-backed RSS at start. Once
 * the service has started, the kernel is advised to page out the library's clean mappings
 * (MADV_PAGEOUT); what the service goes on running faults back in from the file. Under the ingest
 * bench, the library's pages came back to ~95 MB and the peak RSS fell by ~110 MB (docs/bench.md).
 * Only clean file pages are advised: the library's relocated and writable pages are left alone.
 */

/** A mapping of the library whose pages are all the file's (none copied on write). */
export interface CleanMapping {
  start: bigint;
  end: bigint;
  residentKb: number;
}

const LIBRARY = /\/libchdb\.so$/;
const MADV_PAGEOUT = 21;

/** The library's clean mappings in a `/proc/<pid>/smaps` text. */
export function cleanMappings(smaps: string, library: RegExp = LIBRARY): CleanMapping[] {
  const out: CleanMapping[] = [];
  let current: { start: bigint; end: bigint; ours: boolean; rss: number; anonymous: number } | undefined;
  const flush = () => {
    if (current?.ours && current.anonymous === 0)
      out.push({ start: current.start, end: current.end, residentKb: current.rss });
  };
  for (const line of smaps.split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      flush();
      current = {
        start: BigInt(`0x${header[1]}`),
        end: BigInt(`0x${header[2]}`),
        ours: library.test(header[3] ?? ''),
        rss: 0,
        anonymous: -1,
      };
      continue;
    }
    if (!current?.ours) continue;
    const field = /^(Rss|Anonymous):\s+(\d+) kB$/.exec(line);
    if (field?.[1] === 'Rss') current.rss = Number(field[2]);
    else if (field?.[1] === 'Anonymous') current.anonymous = Number(field[2]);
  }
  flush();
  return out;
}

export type PageOutResult =
  | { pagedOut: true; advisedMb: number; residentBeforeMb: number; residentAfterMb: number }
  | { pagedOut: false; reason: string };

const mb = (kb: number) => Math.round(kb / 1024);

/**
 * Advises the kernel to page out the engine library's clean pages of this process, once the
 * service has started. Best effort: anything missing (not Linux, no FFI, an older kernel) is a
 * reason, never an error.
 */
export function pageOutEngineCode(): PageOutResult {
  if (process.platform !== 'linux') return { pagedOut: false, reason: 'not Linux' };
  const before = cleanMappings(fs.readFileSync('/proc/self/smaps', 'utf8'));
  if (before.length === 0) return { pagedOut: false, reason: 'the engine library is not loaded' };
  let madvise: (addr: bigint, len: number, advice: number) => number;
  let errno: () => number;
  try {
    // koffi (an optional dependency, prebuilt per platform): Node has no madvise of its own.
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    madvise = koffi.load('libc.so.6').func('int madvise(uintptr_t addr, size_t len, int advice)');
    errno = () => koffi.errno();
  } catch {
    return { pagedOut: false, reason: 'koffi (optional dependency) is not installed' };
  }
  let advised = 0;
  for (const m of before) {
    const len = Number(m.end - m.start);
    if (madvise(m.start, len, MADV_PAGEOUT) !== 0)
      return { pagedOut: false, reason: `madvise failed: errno ${errno()}` };
    advised += len;
  }
  const after = cleanMappings(fs.readFileSync('/proc/self/smaps', 'utf8'));
  const sum = (ms: CleanMapping[]) => ms.reduce((s, m) => s + m.residentKb, 0);
  return {
    pagedOut: true,
    advisedMb: mb(advised / 1024),
    residentBeforeMb: mb(sum(before)),
    residentAfterMb: mb(sum(after)),
  };
}
