import { opensWith, sealSecret } from '../lib/secretBox.ts';
import type { Queryable } from '../stores/postgres/port.ts';

const CHECK_TEXT = 'flightrec secrets key check';

export class SecretsKeyMismatchError extends Error {
  constructor() {
    super(
      "This process's server key does not open the secrets stored in this database: every process on one " +
        'Postgres must run with the same SECRETS_KEY. A process without SECRETS_KEY uses the key generated into ' +
        "its DATA_DIR/secrets.key; to adopt SECRETS_KEY on an existing deployment, set it to that file's content.",
    );
    this.name = 'SecretsKeyMismatchError';
  }
}

/**
 * Start-up, before any secret is sealed: the key must open this database's check value, which
 * the first process to start wrote. A database from before the check has its webhooks' sealed
 * secrets as the witness instead, and gets its check value now.
 */
export async function verifySecretsKey(q: Queryable, key: Buffer): Promise<void> {
  const checkValue = async () =>
    (await q.query<{ sealed: string }>('SELECT sealed FROM secrets_key_check WHERE id = 1')).rows[0]?.sealed;
  if ((await checkValue()) === undefined) {
    const witness = (
      await q.query<{ secret: string }>("SELECT secret FROM webhooks WHERE secret LIKE 'enc:v1:%' LIMIT 1")
    ).rows[0];
    if (witness && !opensWith(key, witness.secret)) throw new SecretsKeyMismatchError();
    await q.query('INSERT INTO secrets_key_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [
      sealSecret(key, CHECK_TEXT),
    ]);
  }
  // Read again: a process starting at the same moment may have written its own first.
  const sealed = await checkValue();
  if (sealed === undefined || !opensWith(key, sealed, CHECK_TEXT)) throw new SecretsKeyMismatchError();
}
