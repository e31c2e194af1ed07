import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { isoTime } from '../lib/time.ts';
import { present } from '../lib/invariant.ts';

export interface User {
  id: string;
  email: string;
  /** Whether the owner of the address proved it (the verification link); nothing counts it before. */
  emailVerified: boolean;
  suspendedAt: string | null;
  createdAt: string;
}

export interface TeamRow {
  id: string;
  name: string;
  ownerId: string;
  ownerEmail: string;
  ownerSuspended: boolean;
  role: 'owner' | 'member';
}

interface UserRow {
  id: string;
  email: string;
  email_verified_at: Date | string | null;
  suspended_at: Date | string | null;
  created_at: Date | string;
}

export interface Invitation {
  id: string;
  teamId: string;
  email: string;
  createdAt: string;
  /** When the invitation email went out; null while the worker has still to send it. */
  mailedAt: string | null;
}

interface InvitationRow {
  id: string;
  team_id: string;
  email: string;
  created_at: Date | string;
  mailed_at: Date | string | null;
}

const INVITATION_COLUMNS = 'id, team_id, email, created_at, mailed_at';

const toInvitation = (r: InvitationRow): Invitation => ({
  id: r.id,
  teamId: r.team_id,
  email: r.email,
  createdAt: isoTime(r.created_at),
  mailedAt: isoTime(r.mailed_at),
});

/** Where an account's email verification stands, for the dashboard's banner. */
export interface Verification {
  verified: boolean;
  /** When the last link went out; null when none has yet (the worker sends it shortly). */
  mailedAt: string | null;
}

const USER_COLUMNS = 'id, email, email_verified_at, suspended_at, created_at';
const U_COLUMNS = 'u.id, u.email, u.email_verified_at, u.suspended_at, u.created_at';

const toUser = (r: UserRow): User => ({
  id: r.id,
  email: r.email,
  emailVerified: r.email_verified_at !== null,
  suspendedAt: isoTime(r.suspended_at),
  createdAt: isoTime(r.created_at),
});

/**
 * What a suspension does to the keys of the teams a user owns, in the suspension's own
 * transaction; the keys are another table's, so the wiring passes their owner in.
 */
export interface SuspensionKeys {
  suspend(q: Queryable, teamIds: string[]): Promise<string[]>;
  unsuspend(q: Queryable, teamIds: string[]): Promise<string[]>;
}

async function ownedTeams(q: Queryable, userId: string): Promise<string[]> {
  const r = await q.query<{ id: string }>('SELECT id FROM teams WHERE owner_id = $1', [userId]);
  return r.rows.map((t) => t.id);
}

/**
 * The verified addresses of a team's members whose accounts are not suspended: the alert
 * fallback, and the "member's own address" an alert list may name without a confirmation.
 * An unverified address is anyone's claim, so it counts for neither.
 */
export async function memberEmailsOfTeam(q: Queryable, teamId: string): Promise<string[]> {
  const r = await q.query<{ email: string }>(
    `SELECT u.email FROM team_members m JOIN users u ON u.id = m.user_id
     WHERE m.team_id = $1 AND u.suspended_at IS NULL AND u.email_verified_at IS NOT NULL ORDER BY u.email`,
    [teamId],
  );
  return r.rows.map((x) => x.email);
}

/** Users, teams, memberships and log-in sessions (`users`, `teams`, `team_members`, `user_sessions`). */
export function accountsRepo(db: Postgres, keys: SuspensionKeys) {
  return {
    /** A new user with their own team (they own it); null when the email is taken. */
    async createUserWithTeam(
      email: string,
      passwordHash: string,
      teamName: string,
    ): Promise<{ user: User; teamId: string } | null> {
      return db.tx(async (q) => {
        const r = await q.query<UserRow>(
          `INSERT INTO users (id, email, password_hash, verify_requested_at) VALUES ($1, $2, $3, now())
           ON CONFLICT (email) DO NOTHING RETURNING ${USER_COLUMNS}`,
          [randomUUID(), email, passwordHash],
        );
        const row = r.rows[0];
        if (!row) return null;
        const user = toUser(row);
        const teamId = randomUUID();
        await q.query('INSERT INTO teams (id, name, owner_id) VALUES ($1, $2, $3)', [teamId, teamName, user.id]);
        await q.query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'owner')", [teamId, user.id]);
        return { user, teamId };
      });
    },

    async findUserForLogin(email: string): Promise<(User & { passwordHash: string }) | null> {
      const r = await db.query<UserRow & { password_hash: string }>(
        `SELECT ${USER_COLUMNS}, password_hash FROM users WHERE email = $1`,
        [email],
      );
      const row = r.rows[0];
      return row ? { ...toUser(row), passwordHash: row.password_hash } : null;
    },

    async getUser(id: string): Promise<User | null> {
      const r = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
      return r.rows[0] ? toUser(r.rows[0]) : null;
    },

    async findUsersByEmail(email: string): Promise<User[]> {
      const r = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE email = $1`, [email]);
      return r.rows.map(toUser);
    },

    async createSession(tokenHash: string, userId: string, ttlMs: number): Promise<void> {
      await db.query(
        "INSERT INTO user_sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + ($3 || ' milliseconds')::interval)",
        [tokenHash, userId, String(ttlMs)],
      );
    },

    /** The session's user, or null when the session is unknown, expired or its user suspended. */
    async userBySession(tokenHash: string): Promise<User | null> {
      const r = await db.query<UserRow>(
        `SELECT ${U_COLUMNS} FROM user_sessions s JOIN users u ON u.id = s.user_id
         WHERE s.token_hash = $1 AND s.expires_at > now() AND u.suspended_at IS NULL`,
        [tokenHash],
      );
      return r.rows[0] ? toUser(r.rows[0]) : null;
    },

    async deleteSession(tokenHash: string): Promise<void> {
      await db.query('DELETE FROM user_sessions WHERE token_hash = $1', [tokenHash]);
    },

    /** Housekeeping, called on log-in: expired rows serve nobody. */
    async deleteExpiredSessions(userId: string): Promise<void> {
      await db.query('DELETE FROM user_sessions WHERE user_id = $1 AND expires_at <= now()', [userId]);
    },

    /** The teams the user belongs to, with their role in each. */
    async teamsOf(userId: string): Promise<TeamRow[]> {
      const r = await db.query<{
        id: string;
        name: string;
        owner_id: string;
        owner_email: string;
        owner_suspended: boolean;
        role: 'owner' | 'member';
      }>(
        `SELECT t.id, t.name, t.owner_id, o.email AS owner_email, o.suspended_at IS NOT NULL AS owner_suspended, m.role
         FROM team_members m JOIN teams t ON t.id = m.team_id JOIN users o ON o.id = t.owner_id
         WHERE m.user_id = $1 ORDER BY m.role = 'owner' DESC, t.created_at, t.id`,
        [userId],
      );
      return r.rows.map((t) => ({
        id: t.id,
        name: t.name,
        ownerId: t.owner_id,
        ownerEmail: t.owner_email,
        ownerSuspended: t.owner_suspended,
        role: t.role,
      }));
    },

    async membersOf(teamId: string) {
      const r = await db.query<{ user_id: string; email: string; role: 'owner' | 'member' }>(
        `SELECT m.user_id, u.email, m.role FROM team_members m JOIN users u ON u.id = m.user_id
         WHERE m.team_id = $1 ORDER BY m.role = 'owner' DESC, u.email`,
        [teamId],
      );
      return r.rows.map((m) => ({ userId: m.user_id, email: m.email, role: m.role }));
    },

    /** The members of several teams in one query, keyed by team. */
    async membersOfTeams(teamIds: string[]) {
      const out = new Map<string, { userId: string; email: string; role: 'owner' | 'member' }[]>(
        teamIds.map((id) => [id, []]),
      );
      if (teamIds.length === 0) return out;
      const r = await db.query<{ team_id: string; user_id: string; email: string; role: 'owner' | 'member' }>(
        `SELECT m.team_id, m.user_id, u.email, m.role FROM team_members m JOIN users u ON u.id = m.user_id
         WHERE m.team_id = ANY($1::uuid[]) ORDER BY m.role = 'owner' DESC, u.email`,
        [teamIds],
      );
      for (const m of r.rows) out.get(m.team_id)?.push({ userId: m.user_id, email: m.email, role: m.role });
      return out;
    },

    /** A team by id, or the team a user owns (found by their email); null when there is none. */
    async findTeam(
      by: { id: string } | { ownerEmail: string },
    ): Promise<{ id: string; name: string; ownerEmail: string } | null> {
      const r =
        'id' in by
          ? await db.query<{ id: string; name: string; owner_email: string }>(
              'SELECT t.id, t.name, u.email AS owner_email FROM teams t JOIN users u ON u.id = t.owner_id WHERE t.id = $1',
              [by.id],
            )
          : await db.query<{ id: string; name: string; owner_email: string }>(
              'SELECT t.id, t.name, u.email AS owner_email FROM teams t JOIN users u ON u.id = t.owner_id WHERE u.email = $1 ORDER BY t.created_at, t.id LIMIT 1',
              [by.ownerEmail],
            );
      const t = r.rows[0];
      return t ? { id: t.id, name: t.name, ownerEmail: t.owner_email } : null;
    },

    /**
     * Invites an address to a team: nobody joins a team without accepting. Whether the address
     * has an account is not told (an invitation waits for a sign-up), so inviting cannot probe
     * which addresses have accounts. 'member' when it already belongs to the team.
     */
    async invite(teamId: string, email: string, invitedBy: string): Promise<Invitation | 'member'> {
      const m = await db.query(
        'SELECT 1 FROM team_members m JOIN users u ON u.id = m.user_id WHERE m.team_id = $1 AND u.email = $2',
        [teamId, email],
      );
      if (m.rows.length) return 'member';
      const r = await db.query<InvitationRow>(
        `INSERT INTO team_invitations (id, team_id, email, invited_by) VALUES ($1, $2, $3, $4)
         ON CONFLICT (team_id, email) DO UPDATE SET invited_by = EXCLUDED.invited_by
         RETURNING ${INVITATION_COLUMNS}`,
        [randomUUID(), teamId, email, invitedBy],
      );
      return toInvitation(present(r.rows[0], 'the invitation row of INSERT … ON CONFLICT DO UPDATE RETURNING'));
    },

    /** A team's pending invitations (for its owner). */
    async invitationsOfTeam(teamId: string): Promise<Invitation[]> {
      const r = await db.query<InvitationRow>(
        `SELECT ${INVITATION_COLUMNS} FROM team_invitations WHERE team_id = $1 ORDER BY created_at, id`,
        [teamId],
      );
      return r.rows.map(toInvitation);
    },

    async revokeInvitation(teamId: string, invitationId: string): Promise<boolean> {
      const r = await db.query('DELETE FROM team_invitations WHERE team_id = $1 AND id = $2 RETURNING 1', [
        teamId,
        invitationId,
      ]);
      return r.rows.length > 0;
    },

    /** The invitations waiting for this address, with the team and who invited. */
    async invitationsFor(email: string) {
      const r = await db.query<InvitationRow & { team_name: string; invited_by_email: string }>(
        `SELECT i.id, i.team_id, i.email, i.created_at, i.mailed_at, t.name AS team_name, u.email AS invited_by_email
         FROM team_invitations i JOIN teams t ON t.id = i.team_id JOIN users u ON u.id = i.invited_by
         WHERE i.email = $1 ORDER BY i.created_at, i.id`,
        [email],
      );
      return r.rows.map((x) => ({ ...toInvitation(x), teamName: x.team_name, invitedBy: x.invited_by_email }));
    },

    /**
     * The invitee's answer: accepting joins the team as a member, declining drops the
     * invitation. False when no such invitation is addressed to this user.
     */
    async answerInvitation(
      invitationId: string,
      user: { id: string; email: string },
      accept: boolean,
    ): Promise<boolean> {
      return db.tx(async (q) => {
        const r = await q.query<{ team_id: string }>(
          'DELETE FROM team_invitations WHERE id = $1 AND email = $2 RETURNING team_id',
          [invitationId, user.email],
        );
        const row = r.rows[0];
        if (!row) return false;
        if (accept) {
          await q.query(
            "INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'member') ON CONFLICT DO NOTHING",
            [row.team_id, user.id],
          );
        }
        return true;
      });
    },

    /** The addresses of some accounts, by id. */
    async emailsOf(userIds: string[]): Promise<Map<string, string>> {
      if (userIds.length === 0) return new Map();
      const r = await db.query<{ id: string; email: string }>(
        'SELECT id, email FROM users WHERE id = ANY($1::uuid[])',
        [userIds],
      );
      return new Map(r.rows.map((u) => [u.id, u.email]));
    },

    // ---- email verification ----------------------------------------------------------------

    async verification(userId: string): Promise<Verification | null> {
      const r = await db.query<{ verified: boolean; verify_mailed_at: Date | string | null }>(
        'SELECT email_verified_at IS NOT NULL AS verified, verify_mailed_at FROM users WHERE id = $1',
        [userId],
      );
      const row = r.rows[0];
      return row ? { verified: row.verified, mailedAt: isoTime(row.verify_mailed_at) } : null;
    },

    /**
     * Asks for a (new) verification link. 'too-soon' when one went out less than `minGapMs` ago,
     * so the button cannot be used to flood the inbox.
     */
    async requestVerification(userId: string, minGapMs: number): Promise<'requested' | 'verified' | 'too-soon'> {
      const r = await db.query<{ verified: boolean }>(
        `UPDATE users SET verify_requested_at = now()
         WHERE id = $1 AND email_verified_at IS NULL
           AND (verify_mailed_at IS NULL OR verify_mailed_at <= now() - $2::int * interval '1 millisecond')
         RETURNING false AS verified`,
        [userId, minGapMs],
      );
      if (r.rows.length) return 'requested';
      const v = await this.verification(userId);
      return v?.verified ? 'verified' : 'too-soon';
    },

    /** Accounts waiting for a verification link (asked for after the last one went out). */
    async verificationsToMail(limit: number): Promise<{ userId: string; email: string }[]> {
      const r = await db.query<{ id: string; email: string }>(
        `SELECT id, email FROM users
         WHERE email_verified_at IS NULL AND suspended_at IS NULL AND verify_requested_at IS NOT NULL
           AND (verify_mailed_at IS NULL OR verify_mailed_at < verify_requested_at)
         ORDER BY verify_requested_at LIMIT $1`,
        [limit],
      );
      return r.rows.map((x) => ({ userId: x.id, email: x.email }));
    },

    /**
     * Takes the sending of one account's link: stores the token's hash and its expiry and marks
     * it mailed, only if it is still wanted, so two workers never both send it. The new link
     * replaces any earlier one.
     */
    async claimVerificationMail(userId: string, tokenHash: string, ttlMs: number): Promise<boolean> {
      const r = await db.query(
        `UPDATE users SET verify_token_hash = $2, verify_expires_at = now() + $3::int * interval '1 millisecond', verify_mailed_at = now()
         WHERE id = $1 AND email_verified_at IS NULL AND verify_requested_at IS NOT NULL
           AND (verify_mailed_at IS NULL OR verify_mailed_at < verify_requested_at)
         RETURNING 1`,
        [userId, tokenHash, ttlMs],
      );
      return r.rows.length > 0;
    },

    /** Verifies the address whose link carried this token; null for an unknown or expired one. */
    async verifyEmail(tokenHash: string): Promise<User | null> {
      const r = await db.query<UserRow>(
        `UPDATE users SET email_verified_at = now(), verify_token_hash = NULL, verify_expires_at = NULL
         WHERE verify_token_hash = $1 AND verify_expires_at > now() AND email_verified_at IS NULL
         RETURNING ${USER_COLUMNS}`,
        [tokenHash],
      );
      return r.rows[0] ? toUser(r.rows[0]) : null;
    },

    // ---- invitation emails -------------------------------------------------------------------

    /** Invitations whose email has not gone out, with their team and who invited. */
    async invitationsToMail(limit: number) {
      const r = await db.query<{
        id: string;
        email: string;
        invited_by: string;
        team_name: string;
        inviter_email: string;
      }>(
        `SELECT i.id, i.email, i.invited_by, t.name AS team_name, u.email AS inviter_email
         FROM team_invitations i JOIN teams t ON t.id = i.team_id JOIN users u ON u.id = i.invited_by
         WHERE i.mailed_at IS NULL ORDER BY i.created_at, i.id LIMIT $1`,
        [limit],
      );
      return r.rows.map((x) => ({
        id: x.id,
        email: x.email,
        invitedBy: x.invited_by,
        teamName: x.team_name,
        inviterEmail: x.inviter_email,
      }));
    },

    /** Takes the sending of one invitation's email (false when another worker took it, or it was revoked). */
    async claimInvitationMail(invitationId: string): Promise<boolean> {
      const r = await db.query(
        'UPDATE team_invitations SET mailed_at = now() WHERE id = $1 AND mailed_at IS NULL RETURNING 1',
        [invitationId],
      );
      return r.rows.length > 0;
    },

    /** A member leaves a team; the owner cannot leave their own team. */
    async leave(teamId: string, userId: string): Promise<'left' | 'owner' | 'not-member'> {
      const r = await db.query<{ role: string }>('SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2', [
        teamId,
        userId,
      ]);
      const role = r.rows[0]?.role;
      if (!role) return 'not-member';
      if (role === 'owner') return 'owner';
      await db.query("DELETE FROM team_members WHERE team_id = $1 AND user_id = $2 AND role = 'member'", [
        teamId,
        userId,
      ]);
      return 'left';
    },

    /** The owner cannot be removed from their own team. */
    async removeMember(teamId: string, userId: string): Promise<boolean> {
      const r = await db.query(
        "DELETE FROM team_members WHERE team_id = $1 AND user_id = $2 AND role = 'member' RETURNING 1",
        [teamId, userId],
      );
      return r.rows.length > 0;
    },

    async ownerSuspended(teamId: string): Promise<boolean> {
      const r = await db.query<{ s: boolean }>(
        'SELECT o.suspended_at IS NOT NULL AS s FROM teams t JOIN users o ON o.id = t.owner_id WHERE t.id = $1',
        [teamId],
      );
      return r.rows[0]?.s ?? false;
    },

    /** The user's membership of a team, with whether its owner is suspended; null when not a member. */
    async membership(
      userId: string,
      teamId: string,
    ): Promise<{ teamId: string; ownerSuspended: boolean; role: 'owner' | 'member' } | null> {
      const r = await db.query<{ team_id: string; owner_suspended: boolean; role: 'owner' | 'member' }>(
        `SELECT t.id AS team_id, o.suspended_at IS NOT NULL AS owner_suspended, m.role
         FROM team_members m JOIN teams t ON t.id = m.team_id JOIN users o ON o.id = t.owner_id
         WHERE m.user_id = $1 AND m.team_id = $2`,
        [userId, teamId],
      );
      const row = r.rows[0];
      return row ? { teamId: row.team_id, ownerSuspended: row.owner_suspended, role: row.role } : null;
    },

    /**
     * Suspends the user and ends their log-in sessions; every active key of a team they own is
     * turned off and marked as turned off by suspension. Returns the hashes of those keys (for
     * the key cache), or null when there is no such user.
     */
    async suspend(userId: string): Promise<{ user: User; keyHashes: string[] } | null> {
      return db.tx(async (q) => {
        const u = await q.query<UserRow>(
          `UPDATE users SET suspended_at = COALESCE(suspended_at, now()) WHERE id = $1 RETURNING ${USER_COLUMNS}`,
          [userId],
        );
        const row = u.rows[0];
        if (!row) return null;
        await q.query('DELETE FROM user_sessions WHERE user_id = $1', [userId]);
        const keyHashes = await keys.suspend(q, await ownedTeams(q, userId));
        return { user: toUser(row), keyHashes };
      });
    },

    /** Lifts a suspension: turns back on exactly the keys the suspension turned off. */
    async unsuspend(userId: string): Promise<{ user: User; keyHashes: string[] } | null> {
      return db.tx(async (q) => {
        const u = await q.query<UserRow>(
          `UPDATE users SET suspended_at = NULL WHERE id = $1 RETURNING ${USER_COLUMNS}`,
          [userId],
        );
        const row = u.rows[0];
        if (!row) return null;
        const keyHashes = await keys.unsuspend(q, await ownedTeams(q, userId));
        return { user: toUser(row), keyHashes };
      });
    },
  };
}

export type AccountsRepo = ReturnType<typeof accountsRepo>;

/** The owner of a team (the account its projects' mail counts against); null for an unknown team. */
export async function ownerOfTeam(q: Queryable, teamId: string): Promise<string | null> {
  const r = await q.query<{ owner_id: string }>('SELECT owner_id FROM teams WHERE id = $1', [teamId]);
  return r.rows[0]?.owner_id ?? null;
}
