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
