import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

// Key format (docs/decisions.md): "frk_" + 32 random base62 characters + a 6-character base62 CRC32
// of those 32, so a mistyped or truncated key is refused without touching a store.
export const KEY_PREFIX = 'frk_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LEN = 32;
const CHECK_LEN = 6;
const KEY_RE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LEN + CHECK_LEN}}$`);

function base62(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62(crc32(body) >>> 0, CHECK_LEN);
}

export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < BODY_LEN; i++) body += ALPHABET[randomInt(62)];
  return KEY_PREFIX + body + checksum(body);
}

/** True when the key has the right shape and its checksum matches. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_RE.test(key)) return false;
  const body = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LEN);
  return checksum(body) === key.slice(KEY_PREFIX.length + BODY_LEN);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The part of a key shown in lists, so a person can match it to the key they hold. */
export function visiblePrefix(apiKey: string): string {
  return apiKey.slice(0, KEY_PREFIX.length + 4);
}

/**
 * What a key may do. An app embeds its key, so anyone holding the app can read the key: an
 * `ingest`-only key lets them send data but not read the project back through /export.
 * `upload` lets a build (CI) upload source maps and R8/ProGuard mappings; only a key asked for
 * with it carries it, never an app's.
 */
export const KEY_SCOPES = ['ingest', 'export', 'upload'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** The scopes of a key created without asking for any (as keys were before `upload` existed). */
export const DEFAULT_KEY_SCOPES: readonly KeyScope[] = ['ingest', 'export'];

/** The scopes of a new key: the ones asked for (deduplicated, in canonical order), else the default. */
export function keyScopes(asked: readonly string[] | undefined): KeyScope[] {
  if (asked === undefined) return [...DEFAULT_KEY_SCOPES];
  return KEY_SCOPES.filter((s) => asked.includes(s));
}

/**
 * The scopes a team role may give a key it makes in the dashboard. Every member sends data
 * (`ingest`) and uploads a build's symbol files (`upload`, CI); an `export` key reads the whole
 * project out in bulk and outlives whoever made it, so only the team's owner makes one.
 */
export const ROLE_KEY_SCOPES: Readonly<Record<'owner' | 'member', readonly KeyScope[]>> = {
  owner: KEY_SCOPES,
  member: ['ingest', 'upload'],
};

/** The scopes of `asked` that `role` may not give, in canonical order (empty: all allowed). */
export function scopesBeyondRole(role: 'owner' | 'member', asked: readonly KeyScope[]): KeyScope[] {
  return asked.filter((s) => !ROLE_KEY_SCOPES[role].includes(s));
}
