import { describe, expect, it } from 'vitest';
import { crashGroupKey } from '../../src/domain/crashGrouping.ts';
import { corpusPairs, loadCorpus, scoreCorpus, type CorpusCase } from '../helpers/groupingCorpus.ts';

// Other projects' real stacks with their own verdicts of what is one bug (docs/grouping-corpus.md).
// crashGroupKey is called with the report's message too: the revised key reads it when the stack
// carries no message line (Gecko, JavaScriptCore); a key that takes only the stack ignores it.
const key = (c: CorpusCase) =>
  (crashGroupKey as (stackTrace: string, message: string) => string)(c.stackTrace, c.message);

const files = loadCorpus();
const pairs = corpusPairs(files);
const score = scoreCorpus(pairs, key);
const pct = (n: number, d: number) => (d === 0 ? 0 : (100 * n) / d);
const oneBugShare = pct(score.oneBugMerged, score.oneBugPairs);
const twoBugShare = pct(score.twoBugMerged, score.twoBugPairs);

console.log(
  `grouping corpus: ${files.reduce((n, f) => n + f.cases.length, 0)} stacks; ` +
    `one-bug pairs merged ${score.oneBugMerged}/${score.oneBugPairs} (${oneBugShare.toFixed(1)} %), ` +
    `two-bug pairs merged ${score.twoBugMerged}/${score.twoBugPairs} (${twoBugShare.toFixed(1)} %)`,
);
if (score.split.length) console.log(`split one-bug pairs:\n  ${score.split.join('\n  ')}`);
if (score.wronglyMerged.length) console.log(`merged two-bug pairs:\n  ${score.wronglyMerged.join('\n  ')}`);

describe('grouping corpus', () => {
  it('every case names its source, licence and verdict, and ids are unique', () => {
    const ids = new Set<string>();
    for (const f of files) {
      expect(f.family && f.verdict, f.family).toBeTruthy();
      for (const c of f.cases) {
        expect(ids.has(c.id), c.id).toBe(false);
        ids.add(c.id);
        expect(c.source.project && c.source.path && c.source.licence && c.source.verdict, c.id).toBeTruthy();
        expect(c.stackTrace.length, c.id).toBeGreaterThan(0);
      }
    }
  });

  it('holds enough judged pairs for the figures to mean something', () => {
    expect(score.oneBugPairs).toBeGreaterThanOrEqual(60);
    expect(score.twoBugPairs).toBeGreaterThanOrEqual(300);
  });

  // The frame key reads a whole Apple crash report from the backtrace it blames, and a native
  // signal as one placeholder (docs/decisions.md, "One bug, one group").
  it('merges at most 1 % of the pairs their sources call two bugs', () => {
    expect(twoBugShare).toBeLessThanOrEqual(1);
  });

  it('merges at least 80 % of the pairs their sources call one bug', () => {
    expect(oneBugShare).toBeGreaterThanOrEqual(80);
  });
});
