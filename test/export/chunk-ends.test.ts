import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pickChunkEnds } from '../../src/repos/exportCore/clickhouse.ts';

// The candidates the boundary scan's SQL returns for rows of these sizes (chChunks): every
// multiple of `rows`, every row whose running size crosses a multiple of `bytes`, the last row.
function candidates(sizes: number[], rows: number, bytes: number) {
  const out: { key: number; n: number; bytes: number; b: number }[] = [];
  let sum = 0;
  sizes.forEach((b, i) => {
    const n = i + 1;
    sum += b;
    if (n % rows === 0 || n === sizes.length || Math.floor(sum / bytes) > Math.floor((sum - b) / bytes))
      out.push({ key: n, n, bytes: sum, b });
  });
  return out;
}

describe('export chunk ends (pickChunkEnds)', () => {
  it('from each end, takes the furthest candidate that keeps both bounds', () => {
    // 10 rows of 100 bytes, at most 4 rows and 250 bytes before a chunk's last row: the
    // candidates are rows 3, 5, 8 (crossing 250, 500, 750), 4, 8 (multiples of 4) and 10.
    const ends = pickChunkEnds(candidates(Array(10).fill(100), 4, 250), { rows: 4, bytes: 250 });
    expect(ends.map((e) => e.n)).toEqual([3, 5, 8, 10]);
  });

  it('every chunk holds at most size.rows rows and less than size.bytes before its last row; the scan is covered', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 20000 }),
        (sizes, rows, bytes) => {
          const ends = pickChunkEnds(candidates(sizes, rows, bytes), { rows, bytes });
          expect(ends[ends.length - 1]?.n).toBe(sizes.length);
          let from = 0;
          for (const e of ends) {
            expect(e.n).toBeGreaterThan(from);
            expect(e.n - from).toBeLessThanOrEqual(rows);
            const before = sizes.slice(from, e.n - 1).reduce((a, b) => a + b, 0);
            expect(before).toBeLessThan(bytes);
            from = e.n;
          }
        },
      ),
    );
  });
});
