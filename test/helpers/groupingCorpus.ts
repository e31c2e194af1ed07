import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One stack of the corpus and where it comes from (test/fixtures/grouping/*.json, docs/grouping-corpus.md). */
export interface CorpusCase {
  id: string;
  /** Cases of one file with the same bug id are, by their source's own verdict, one bug. */
  bug: string;
  runtime: string;
  /** What the SDK sends as the report's message (describeError: `TypeError: …`, or the bare message of an `Error`). */
  message: string;
  stackTrace: string;
  source: { project: string; path: string; licence: string; verdict: string };
}

export interface CorpusFile {
  family: string;
  description: string;
  verdict: string;
  /** Whether two different bug ids of this family are, by the source's verdict, two bugs (else not counted). */
  differentBugsAreTwoBugs: boolean;
  cases: CorpusCase[];
}

export interface CorpusPair {
  a: CorpusCase;
  b: CorpusCase;
  oneBug: boolean;
}

export const corpusDir = join(import.meta.dirname, '..', 'fixtures', 'grouping');

export function loadCorpus(dir = corpusDir): CorpusFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CorpusFile);
}

/**
 * Every judged pair: same family and bug → one bug; different families (different programs) → two bugs;
 * same family, different bugs → two bugs only where the family's source says so, else left out.
 */
export function corpusPairs(files: CorpusFile[]): CorpusPair[] {
  const all = files.flatMap((f) => f.cases.map((c) => ({ f, c })));
  const pairs: CorpusPair[] = [];
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const x = all[i]!;
      const y = all[j]!;
      if (x.f.family !== y.f.family) pairs.push({ a: x.c, b: y.c, oneBug: false });
      else if (x.c.bug === y.c.bug) pairs.push({ a: x.c, b: y.c, oneBug: true });
      else if (x.f.differentBugsAreTwoBugs) pairs.push({ a: x.c, b: y.c, oneBug: false });
    }
  }
  return pairs;
}

export interface CorpusScore {
  oneBugPairs: number;
  oneBugMerged: number;
  twoBugPairs: number;
  twoBugMerged: number;
  /** The one-bug pairs split apart and the two-bug pairs merged, by case id, to read what went wrong. */
  split: string[];
  wronglyMerged: string[];
}

export function scoreCorpus(pairs: CorpusPair[], key: (c: CorpusCase) => string): CorpusScore {
  const keys = new Map<string, string>();
  const k = (c: CorpusCase) => {
    let v = keys.get(c.id);
    if (v === undefined) {
      v = key(c);
      keys.set(c.id, v);
    }
    return v;
  };
  const s: CorpusScore = {
    oneBugPairs: 0,
    oneBugMerged: 0,
    twoBugPairs: 0,
    twoBugMerged: 0,
    split: [],
    wronglyMerged: [],
  };
  for (const p of pairs) {
    const same = k(p.a) === k(p.b);
    if (p.oneBug) {
      s.oneBugPairs++;
      if (same) s.oneBugMerged++;
      else s.split.push(`${p.a.id} / ${p.b.id}`);
    } else {
      s.twoBugPairs++;
      if (same) s.twoBugMerged++;
      else continue;
      s.wronglyMerged.push(`${p.a.id} / ${p.b.id}`);
    }
  }
  return s;
}
