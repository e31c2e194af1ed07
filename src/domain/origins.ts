// Browser origins as a project's allowed list holds them and as a request's Origin header is
// compared to it: one spelling (lower-case scheme and host, no default port, no path).

/** `scheme://host[:port]` of an http(s) origin, normalised; undefined for anything else. */
export function originOf(value: string): string | undefined {
  const v = value.trim();
  if (!/^https?:\/\/[^/?#\s@]+\/?$/i.test(v)) return undefined;
  try {
    const u = new URL(v);
    return u.origin === 'null' ? undefined : u.origin;
  } catch {
    return undefined;
  }
}

/**
 * A project's allowed origins, normalised and deduplicated, or the entries that are not origins.
 * null (the default) lets any origin send; an empty list lets no browser page send.
 */
export function normalizeOrigins(list: readonly string[]): { origins: string[]; invalid: number[] } {
  const origins: string[] = [];
  const invalid: number[] = [];
  list.forEach((entry, i) => {
    const o = originOf(entry);
    if (o === undefined) invalid.push(i);
    else if (!origins.includes(o)) origins.push(o);
  });
  return { origins, invalid };
}
