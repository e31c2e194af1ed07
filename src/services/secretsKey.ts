import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { secretsKeyOf } from '../lib/secretBox.ts';

/**
 * The server key that seals stored secrets: SECRETS_KEY, else one generated on first start and
 * kept in DATA_DIR/secrets.key (0600), apart from the database files. Processes that share a
 * Postgres server must share the key: there SECRETS_KEY should be set (main.ts warns).
 */
export function resolveSecretsKey(config: Pick<Config, 'secretsKey' | 'dataDir'>): { key: Buffer; file?: string } {
  if (config.secretsKey) return { key: secretsKeyOf(config.secretsKey) };
  const file = path.join(config.dataDir, 'secrets.key');
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  try {
    return { key: secretsKeyOf(fs.readFileSync(file, 'utf8').trim()), file };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    const text = randomBytes(32).toString('base64url');
    try {
      fs.writeFileSync(file, `${text}\n`, { mode: 0o600, flag: 'wx' });
      return { key: secretsKeyOf(text), file };
    } catch (err) {
      // another process of this DATA_DIR wrote it first (a standalone worker beside the server)
      if ((err as NodeJS.ErrnoException).code === 'EEXIST')
        return { key: secretsKeyOf(fs.readFileSync(file, 'utf8').trim()), file };
      throw err;
    }
  }
}
