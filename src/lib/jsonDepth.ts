/** Deepest nesting allowed in free-form objects (custom event `properties`). */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether a parsed JSON value nests deeper than `max` objects/arrays. Iterative: a hostile
 * body nested 100k levels deep parses fine but would overflow the stack of a recursive walk
 * (JSON.stringify included), so it is refused before anything serialises it.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, depth] = top;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * A copy of `value` whose containers below depth `max` are emptied, so it nests at most
 * `max + 1` deep and serialises without overflowing the stack. A value that nested deeper than
 * `max` still does, so a rule that refuses depth (any limit below `max`) reaches the same verdict
 * on the copy as on the original. The walk recurses at most `max` levels.
 */
export function pruneDeeperThan<T>(value: T, max: number): T {
  const copy = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if (depth >= max) return Array.isArray(v) ? [] : {};
    if (Array.isArray(v)) return v.map((c) => copy(c, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, c] of Object.entries(v)) out[k] = copy(c, depth + 1);
    return out;
  };
  return copy(value, 0) as T;
}
