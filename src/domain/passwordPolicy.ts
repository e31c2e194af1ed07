/** Shortest password accepted, in characters (code points, so a passphrase in any script counts alike). */
export const MIN_PASSWORD = 10;

/** Fewest different characters: `aaaaaaaaaa` or `ababababab` is not a password. */
const MIN_DISTINCT = 4;

/**
 * Why a new password is refused, or null when it is accepted: too short, all whitespace, too
 * few different characters, or on the list of common passwords (compared in lower case).
 */
export function passwordProblem(password: string, common: ReadonlySet<string>): string | null {
  const chars = [...password];
  if (chars.length < MIN_PASSWORD) return `must have at least ${MIN_PASSWORD} characters`;
  if (password.trim() === '') return 'must not be only whitespace';
  if (new Set(chars).size < MIN_DISTINCT) return `must use at least ${MIN_DISTINCT} different characters`;
  if (common.has(password.toLowerCase()) || common.has(password.trim().toLowerCase()))
    return 'is one of the most common passwords: choose another';
  return null;
}

/** The list file's passwords: one per line, `#` lines are comments. */
export function parsePasswordList(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .map((l) => l.trim().toLowerCase())
      .filter((l) => l !== '' && !l.startsWith('#')),
  );
}
