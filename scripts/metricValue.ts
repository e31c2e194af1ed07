/**
 * A series' value in the text `/metrics` answers (NaN when the series is absent), named as the
 * text writes it (`name`, or `name{label="value"}` with its labels in order): the one reader of
 * the service's metrics for the tests and the benches.
 */
export function metricValue(text: string, name: string): number {
  const m = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}
