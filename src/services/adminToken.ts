import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigError, type Config } from '../config.ts';

/**
 * ADMIN_TOKEN from the environment; in embedded mode, when unset, one generated on first start
 * and kept in DATA_DIR/admin-token (mode 0600). Behind a real Postgres several processes must
 * agree on it, so there it has to be set.
 */
export function resolveAdminToken(config: Config): { token: string; file?: string } {
  if (config.adminToken) return { token: config.adminToken };
  if (config.databaseUrl) throw new ConfigError('ADMIN_TOKEN must be set when DATABASE_URL is set');
  const file = path.join(config.dataDir, 'admin-token');
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    return { token: fs.readFileSync(file, 'utf8').trim(), file };
  } catch {
    const token = randomBytes(24).toString('base64url');
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return { token, file };
  }
}
