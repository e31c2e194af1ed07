import type { Postgres } from '../stores/postgres/port.ts';
import { present } from '../lib/invariant.ts';

/** The Postgres `mail_log` table: every email the service sends, for the daily caps. */
const TABLE = 'mail_log';

export type MailKind = 'verification' | 'invitation' | 'recipient-confirmation' | 'alert';

/** Emails per day: to one address, and caused by one account (counted per recipient). */
export interface MailCaps {
  perAddress: number;
  perAccount: number;
}

export function mailLogRepo(db: Postgres) {
  return {
    /**
     * Reserves one email of `kind` to `recipient` on behalf of `accountId` (null: the operator's
     * own settings) when both are under their caps for the last 24 hours; false otherwise. The
     * address and the account are locked for the check, so concurrent workers cannot both pass
     * the last place. A reservation whose email then fails still counts: the caps err on the side
     * of sending less.
     */
    async reserve(kind: MailKind, recipient: string, accountId: string | null, caps: MailCaps): Promise<boolean> {
      return db.tx(async (q) => {
        await q.query("SELECT pg_advisory_xact_lock(hashtext('flightrec-mail:' || $1))", [recipient]);
        if (accountId !== null)
          await q.query("SELECT pg_advisory_xact_lock(hashtext('flightrec-mail-account:' || $1))", [accountId]);
        const r = await q.query<{ by_address: string | number; by_account: string | number }>(
          `SELECT (SELECT count(*) FROM ${TABLE} WHERE recipient = $1 AND sent_at > now() - interval '1 day') AS by_address,
                  (SELECT count(*) FROM ${TABLE} WHERE $2::uuid IS NOT NULL AND account_id = $2::uuid AND sent_at > now() - interval '1 day') AS by_account`,
          [recipient, accountId],
        );
        const row = present(r.rows[0], 'the counts row of a SELECT with no FROM');
        if (Number(row.by_address) >= caps.perAddress) return false;
        if (accountId !== null && Number(row.by_account) >= caps.perAccount) return false;
        await q.query(`INSERT INTO ${TABLE} (kind, recipient, account_id) VALUES ($1, $2, $3)`, [
          kind,
          recipient,
          accountId,
        ]);
        return true;
      });
    },

    /** Housekeeping: rows older than two days count for no cap. */
    async prune(): Promise<void> {
      await db.query(`DELETE FROM ${TABLE} WHERE sent_at < now() - interval '2 days'`);
    },
  };
}

export type MailLogRepo = ReturnType<typeof mailLogRepo>;
