import fs from 'node:fs';
import { createHmac, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { MIN_PASSWORD, parsePasswordList, passwordProblem } from '../domain/passwordPolicy.ts';
import { ValidationError } from '../domain/errors.ts';
import type { AccountsRepo, User } from '../repos/accounts.ts';
import { hashToken } from '../domain/ids.ts';

// scrypt, memory-hard: N=2^15, r=8 takes 32 MiB and ~100 ms per hash on this class of
// machine, which bounds a password-guessing attacker with a stolen table far more than a
// fast hash, while 20 log-ins per minute per IP keep the server's own cost small.
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LEN = 64;
export const SESSION_TTL_MS = 14 * 24 * 3600 * 1000;
export const SESSION_COOKIE = 'flightrec_session';
/** The least time between two verification emails of one account. */
export const RESEND_GAP_MS = 60_000;
export { MIN_PASSWORD };

let common: Set<string> | undefined;
/** The shipped list of common passwords, read once. */
const commonPasswords = () =>
  (common ??= parsePasswordList(fs.readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')));

function scryptAsync(password: string, salt: Buffer, keyLen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keyLen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url), so the cost can be raised later for new hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, KEY_LEN, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return timingSafeEqual(key, expected);
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * The CSRF token is derived from the session token (HMAC), so it needs no storage, changes
 * with every log-in, and a page on another site can neither read nor compute it.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('flightrec-csrf').digest('base64url');
}

export function csrfMatches(sessionToken: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const a = Buffer.from(csrfTokenFor(sessionToken));
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type LoginResult = { ok: true; user: User; token: string } | { ok: false; reason: 'invalid' | 'suspended' };

// A log-in for an unknown email still runs one scrypt, so timing does not tell which
// addresses have accounts.
let dummyHash: Promise<string> | undefined;

export function accountsService(repo: AccountsRepo) {
  async function openSession(userId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await repo.createSession(hashToken(token), userId, SESSION_TTL_MS);
    return token;
  }

  return {
    repo,

    /** null when the email already has an account. */
    async signup(email: string, password: string): Promise<{ user: User; token: string } | null> {
      const problem = passwordProblem(password, commonPasswords());
      if (problem) throw new ValidationError([{ path: '/password', message: problem }]);
      const e = normalizeEmail(email);
      const created = await repo.createUserWithTeam(e, await hashPassword(password), `${e.split('@')[0]}'s team`);
      if (!created) return null;
      return { user: created.user, token: await openSession(created.user.id) };
    },

    async login(email: string, password: string): Promise<LoginResult> {
      const u = await repo.findUserForLogin(normalizeEmail(email));
      if (!u) {
        dummyHash ??= hashPassword('not a password');
        await verifyPassword(password, await dummyHash);
        return { ok: false, reason: 'invalid' };
      }
      if (!(await verifyPassword(password, u.passwordHash))) return { ok: false, reason: 'invalid' };
      // Checked after the password, so a suspension is only revealed to whoever knows it.
      if (u.suspendedAt) return { ok: false, reason: 'suspended' };
      await repo.deleteExpiredSessions(u.id);
      const { passwordHash: _, ...user } = u;
      return { ok: true, user, token: await openSession(u.id) };
    },

    userBySession: (token: string) => repo.userBySession(hashToken(token)),

    /** The address whose link carried this token is verified; null for an unknown or expired link. */
    verifyEmail: (token: string) => repo.verifyEmail(hashToken(token)),

    /** "Resend the link": at most one a minute per account (and the daily mail caps apply). */
    requestVerification: (userId: string) => repo.requestVerification(userId, RESEND_GAP_MS),

    verification: (userId: string) => repo.verification(userId),
    logout: (token: string) => repo.deleteSession(hashToken(token)),
  };
}

export type AccountsService = ReturnType<typeof accountsService>;
