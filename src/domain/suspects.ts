/**
 * Suspects of a crash group: the values of a dimension (release, OS version, device model,
 * network type, environment, a tag) that the group's occurrences carry more often than the
 * project's baseline over the same days (docs/decisions.md, "Crash suspects and the trail").
 *
 * The statistic is the lift, P(value | group) / P(value | baseline), and what ranks is a
 * conservative lower bound of it: the 95 % Wilson lower bound of the group's share divided by
 * the 95 % Wilson upper bound of the baseline's share. Both shares' uncertainty is counted, a
 * value the baseline never saw still gets a finite bound, and a value seen a handful of times
 * cannot outrank a value seen thousands of times at a similar lift. Only values whose bound is
 * above 1 are suspects. Pure: counts in, ranked rows out.
 */

/** z of a two-sided 95 % interval. */
const Z = 1.959963984540054;

/** Fewer occurrences of a value than this are never a suspect, whatever the bound says. */
export const MIN_SUSPECT_COUNT = 3;

/** Wilson score interval of a proportion of `x` successes in `n` trials (95 %). */
export function wilson(x: number, n: number): { low: number; high: number } {
  if (n <= 0) return { low: 0, high: 1 };
  const p = Math.min(1, Math.max(0, x / n));
  const z2 = Z * Z;
  const centre = p + z2 / (2 * n);
  const spread = Z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const denom = 1 + z2 / n;
  return { low: Math.max(0, (centre - spread) / denom), high: Math.min(1, (centre + spread) / denom) };
}

/** One dimension's counts: the group's and the baseline's totals, and the count of each value. */
export interface DimensionCounts {
  dimension: string;
  /** what the baseline counts for this dimension (sessions, or occurrences of the project) */
  baselineUnit: 'sessions' | 'occurrences';
  groupTotal: number;
  baselineTotal: number;
  group: ReadonlyMap<string, number>;
  baseline: ReadonlyMap<string, number>;
}

export interface Suspect {
  dimension: string;
  value: string;
  groupCount: number;
  groupShare: number;
  baselineCount: number;
  baselineShare: number;
  baselineUnit: 'sessions' | 'occurrences';
  /** the point estimate, null when the baseline never saw the value */
  lift: number | null;
  /** the lower bound the ranking uses (> 1 for every suspect) */
  liftLow: number;
}

/** The over-represented values of every dimension, the strongest first (at most `limit`). */
export function rankSuspects(dimensions: readonly DimensionCounts[], limit = 50): Suspect[] {
  const out: Suspect[] = [];
  for (const d of dimensions) {
    if (d.groupTotal <= 0 || d.baselineTotal <= 0) continue;
    for (const [value, rawCount] of d.group) {
      // a count can never exceed its total (sketch-estimated totals may be a little low)
      const groupCount = Math.min(rawCount, d.groupTotal);
      if (groupCount < MIN_SUSPECT_COUNT) continue;
      const baselineCount = Math.min(d.baseline.get(value) ?? 0, d.baselineTotal);
      const groupShare = groupCount / d.groupTotal;
      const baselineShare = baselineCount / d.baselineTotal;
      const liftLow = wilson(groupCount, d.groupTotal).low / wilson(baselineCount, d.baselineTotal).high;
      if (!(liftLow > 1)) continue;
      out.push({
        dimension: d.dimension,
        value,
        groupCount,
        groupShare,
        baselineCount,
        baselineShare,
        baselineUnit: d.baselineUnit,
        lift: baselineShare > 0 ? groupShare / baselineShare : null,
        liftLow,
      });
    }
  }
  // Ties (equal bounds) go to the value more occurrences carry, then a stable text order.
  out.sort(
    (a, b) =>
      b.liftLow - a.liftLow || b.groupCount - a.groupCount || cmp(a.dimension, b.dimension) || cmp(a.value, b.value),
  );
  return out.slice(0, limit);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
