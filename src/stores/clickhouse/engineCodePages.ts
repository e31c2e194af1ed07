import fs from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The embedded engine's library (chDB's libchdb.so, 566 MB) runs much of its code once, at start:
 * it registers its functions, formats and settings, and the migrations run statements the
 * service never runs again. Those pages stay resident, ~220 MB of file-backed RSS at start. Once
 * the service has started, the kernel is advised to page out the library's clean mappings
 * (MADV_PAGEOUT); what the service goes on running faults back in from the file. Under the ingest
 * bench, the file-backed RSS at peak was ~150 MB instead of ~240, and the peak ~90 MB lower
 * (docs/bench.md).
 * Only clean file pages are advised: the library's relocated and writable pages are left alone.
 * The kernel pages out only the pages no other process maps: a second process running the same
 * library file (another test worker, say) keeps the pages both touched resident.
 */

/** A mapping of the library whose pages are all the file's (none copied on write). */
export interface CleanMapping {
  start: bigint;
  end: bigint;
  residentKb: number;
  /** Resident and mapped by this process alone: what the kernel can page out. */
  ownKb: number;
}

const LIBRARY = /\/libchdb\.so$/;
const MADV_PAGEOUT = 21;

/** The library's clean mappings in a `/proc/<pid>/smaps` text. */
export function cleanMappings(smaps: string, library: RegExp = LIBRARY): CleanMapping[] {
  const out: CleanMapping[] = [];
  let current: { start: bigint; end: bigint; ours: boolean; rss: number; own: number; anonymous: number } | undefined;
  const flush = () => {
    if (current?.ours && current.anonymous === 0)
      out.push({ start: current.start, end: current.end, residentKb: current.rss, ownKb: current.own });
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
        own: 0,
        anonymous: -1,
      };
      continue;
    }
    if (!current?.ours) continue;
    const field = /^(Rss|Private_Clean|Anonymous):\s+(\d+) kB$/.exec(line);
    if (field?.[1] === 'Rss') current.rss = Number(field[2]);
    else if (field?.[1] === 'Private_Clean') current.own = Number(field[2]);
    else if (field?.[1] === 'Anonymous') current.anonymous = Number(field[2]);
  }
  flush();
  return out;
}

export type PageOutResult =
  | {
      pagedOut: true;
      advisedKb: number;
      residentBeforeKb: number;
      residentAfterKb: number;
      /** Resident pages no other process maps (what the kernel can page out), before and after. */
      ownBeforeKb: number;
      ownAfterKb: number;
    }
  | { pagedOut: false; reason: string };

/** The embedded engine's start-up code, once the service has started (src/main.ts). */
export const pageOutEngineCode = (): PageOutResult => pageOutCode(LIBRARY);

/**
 * Advises the kernel to page out a library's clean pages of this process. Best effort: anything
 * missing (not Linux, no FFI, an older kernel) is a reason, never an error.
 */
export function pageOutCode(library: RegExp): PageOutResult {
  if (process.platform !== 'linux') return { pagedOut: false, reason: 'not Linux' };
  const before = cleanMappings(fs.readFileSync('/proc/self/smaps', 'utf8'), library);
  if (before.length === 0) return { pagedOut: false, reason: 'the library is not loaded' };
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
  const after = cleanMappings(fs.readFileSync('/proc/self/smaps', 'utf8'), library);
  const sum = (ms: CleanMapping[], k: 'residentKb' | 'ownKb') => ms.reduce((s, m) => s + m[k], 0);
  return {
    pagedOut: true,
    advisedKb: advised / 1024,
    residentBeforeKb: sum(before, 'residentKb'),
    residentAfterKb: sum(after, 'residentKb'),
    ownBeforeKb: sum(before, 'ownKb'),
    ownAfterKb: sum(after, 'ownKb'),
  };
}
