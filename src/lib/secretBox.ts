import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets the service must read back (webhook signing secrets), stored encrypted with a server
 * key: AES-256-GCM, a random 96-bit IV each, `enc:v1:<iv>:<tag>:<ciphertext>` (base64url). A
 * value without the prefix is one stored before encryption, read as it is until it is sealed.
 */
const PREFIX = 'enc:v1:';

/** The 32-byte key of any server key text (SECRETS_KEY, or the generated key file's content). */
export const secretsKeyOf = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

export const isSealed = (stored: string): boolean => stored.startsWith(PREFIX);

export function sealSecret(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${PREFIX}${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${data.toString('base64url')}`;
}

/** The secret; throws when it was sealed with another key (or altered). */
export function openSecret(key: Buffer, stored: string): string {
  if (!isSealed(stored)) return stored;
  const [iv, tag, data] = stored.slice(PREFIX.length).split(':');
  if (iv === undefined || tag === undefined || data === undefined) throw new Error('malformed sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}

/** Whether `key` opens a sealed value (and, given `expected`, finds that text in it). */
export function opensWith(key: Buffer, sealed: string, expected?: string): boolean {
  if (!isSealed(sealed)) return false;
  try {
    const plain = openSecret(key, sealed);
    return expected === undefined || plain === expected;
  } catch {
    return false;
  }
}
