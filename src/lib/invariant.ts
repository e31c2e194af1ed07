/**
 * The value the caller knows is there: a capture group that always takes part in its match, an
 * entry the code just put in a map. A broken invariant is a bug, and it throws naming the value
 * instead of carrying `undefined` on into a wrong answer.
 */
export function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`Internal error: ${what} is missing`);
  return value;
}
