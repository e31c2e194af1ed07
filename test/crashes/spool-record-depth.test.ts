import { describe, expect, it } from 'vitest';
import { nestsDeeperThan, pruneDeeperThan, MAX_JSON_DEPTH } from '../../src/lib/jsonDepth.ts';
import { decodeCrashRecord, encodeCrashRecord } from '../../src/pipeline/crashPipeline.ts';

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('a crash record with a field nested beyond any limit', () => {
  it('prunes below the bound, keeping the verdict of every smaller depth limit', () => {
    const deep = nested(50_000);
    const pruned = pruneDeeperThan(deep, MAX_JSON_DEPTH);
    expect(nestsDeeperThan(pruned, MAX_JSON_DEPTH + 1)).toBe(false);
    for (const limit of [3, 5, MAX_JSON_DEPTH - 1]) expect(nestsDeeperThan(pruned, limit)).toBe(true);
    // Shallow values come back equal.
    const shallow = { a: [1, { b: 'x' }], c: null };
    expect(pruneDeeperThan(shallow, MAX_JSON_DEPTH)).toEqual(shallow);
  });

  it('encodes without overflowing, and decodes to a context still too deep for the record step', () => {
    const crash = { sessionId: 's', stack: 'Error: x', context: nested(50_000) } as never;
    const back = decodeCrashRecord(encodeCrashRecord('p', crash));
    const context = (back.crash as { context: unknown }).context;
    expect(nestsDeeperThan(context, 5)).toBe(true);
    expect(nestsDeeperThan(context, MAX_JSON_DEPTH + 1)).toBe(false);
  });
});
