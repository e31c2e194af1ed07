import { randomBytes } from 'node:crypto';
import type { Queryable } from '../stores/postgres/port.ts';
import { present } from '../lib/invariant.ts';

/** The Postgres `service_secrets` table: keys the service makes for itself, one per name. */
const TABLE = 'service_secrets';

/**
 * The secret of this name, made on first use. Every process (API or worker) reads the same
 * row, so a link signed by one is accepted by all; the first writer wins a race.
 */
export async function serviceSecret(q: Queryable, name: string): Promise<string> {
  await q.query(`INSERT INTO ${TABLE} (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [
    name,
    randomBytes(32).toString('base64url'),
  ]);
  const r = await q.query<{ value: string }>(`SELECT value FROM ${TABLE} WHERE name = $1`, [name]);
  return present(r.rows[0], `service secret ${name}, inserted just before`).value;
}
