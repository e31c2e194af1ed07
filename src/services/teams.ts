import type { AccountsRepo } from '../repos/accounts.ts';
import type { ProjectsRepo } from '../repos/projects.ts';
import type { ApiKeysRepo } from '../repos/apiKeys.ts';
import type { AlertRecipientsRepo } from '../repos/alertRecipients.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../domain/errors.ts';
import { normalizeEmail } from './accounts.ts';

/** The dashboard's Team page: a user's teams with their members; only an owner manages members. */
/** What removing a member does to the team's projects: their keys and alert lists. */
export interface TeamProjects {
  projects: ProjectsRepo;
  keys: ApiKeysRepo;
  recipients: AlertRecipientsRepo;
}

export function teamsService(repo: AccountsRepo, team: TeamProjects) {
  async function ownedTeam(userId: string, teamId: string) {
    const team = (await repo.teamsOf(userId)).find((t) => t.id === teamId);
    if (!team) throw new NotFoundError('Team not found');
    if (team.role !== 'owner') throw new ForbiddenError("Only the team's owner can change its members");
    return team;
  }

  return {
    /** Every team of the user with its members (and, for an owner, its pending invitations). */
    async list(userId: string) {
      const teams = await repo.teamsOf(userId);
      const members = await repo.membersOfTeams(teams.map((t) => t.id));
      return Promise.all(
        teams.map(async (t) => ({
          ...t,
          members: members.get(t.id) ?? [],
          ...(t.role === 'owner' ? { invitations: await repo.invitationsOfTeam(t.id) } : {}),
        })),
      );
    },

    /**
     * Adding someone is an invitation: they join only by accepting it in their own dashboard.
     * The answer is the same whether the address has an account or not.
     */
    async invite(userId: string, teamId: string, email: string) {
      await ownedTeam(userId, teamId);
      const r = await repo.invite(teamId, normalizeEmail(email), userId);
      if (r === 'member') throw new ConflictError('Already a member of this team');
      return { invitation: r, data: await repo.membersOf(teamId) };
    },

    async revokeInvitation(userId: string, teamId: string, invitationId: string) {
      await ownedTeam(userId, teamId);
      if (!(await repo.revokeInvitation(teamId, invitationId))) throw new NotFoundError('Invitation not found');
    },

    /**
     * The invitations waiting for the user's address. An unverified address is only a claim
     * (anyone can sign up with any address), so it sees none until it is verified.
     */
    invitationsFor: async (user: { email: string; emailVerified: boolean }) =>
      user.emailVerified ? repo.invitationsFor(user.email) : [],

    /** The invitee's answer, from a verified address only; anyone else's is a 404. */
    async answer(user: { id: string; email: string; emailVerified: boolean }, invitationId: string, accept: boolean) {
      if (!user.emailVerified)
        throw new ForbiddenError('Verify your email address first: only a verified address can answer an invitation');
      if (!(await repo.answerInvitation(invitationId, user, accept))) throw new NotFoundError('Invitation not found');
      return repo.teamsOf(user.id);
    },

    /** A member leaves a team; its owner cannot. */
    async leave(userId: string, teamId: string) {
      const r = await repo.leave(teamId, userId);
      if (r === 'not-member') throw new NotFoundError('Team not found');
      if (r === 'owner') throw new ConflictError('The owner cannot leave their own team');
      return repo.teamsOf(userId);
    },

    /**
     * The owner removes a member and decides about the keys the member made on the team's
     * projects: 'revoke' turns them off (their hashes are returned, for the key caches),
     * 'reassign' keeps them working under the owner's name. Either way the member's address
     * leaves the alert lists of the team's projects (and the team fallback, being no member).
     */
    async removeMember(userId: string, teamId: string, memberId: string, keys: 'revoke' | 'reassign' = 'revoke') {
      await ownedTeam(userId, teamId);
      const member = (await repo.membersOf(teamId)).find((m) => m.userId === memberId && m.role === 'member');
      if (!member || !(await repo.removeMember(teamId, memberId))) throw new NotFoundError('Member not found');
      const projects = await team.projects.ofTeams([teamId]);
      const keyHashes = await team.keys.ofRemovedMember(
        projects.map((p) => p.id),
        memberId,
        keys,
        userId,
      );
      for (const p of projects) {
        if (!p.alertEmails?.includes(member.email)) continue;
        const rest = p.alertEmails.filter((e) => e !== member.email);
        const updated = await team.projects.update(p.id, { alertEmails: rest.length ? rest : null });
        await team.recipients.sync(p.id, updated?.alertEmails ?? [], []);
      }
      return {
        members: await repo.membersOf(teamId),
        keyHashes,
        keysRevoked: keys === 'revoke' ? keyHashes.length : 0,
      };
    },
  };
}
