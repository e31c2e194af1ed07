import type { AccountsRepo } from '../repos/accounts.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../domain/errors.ts';
import { normalizeEmail } from './accounts.ts';

/** The dashboard's Team page: a user's teams with their members; only an owner manages members. */
export function teamsService(repo: AccountsRepo) {
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
      return Promise.all(teams.map(async (t) => ({
        ...t,
        members: members.get(t.id) ?? [],
        ...(t.role === 'owner' ? { invitations: await repo.invitationsOfTeam(t.id) } : {}),
      })));
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
    invitationsFor: async (user: { email: string; emailVerified: boolean }) => (user.emailVerified ? repo.invitationsFor(user.email) : []),

    /** The invitee's answer, from a verified address only; anyone else's is a 404. */
    async answer(user: { id: string; email: string; emailVerified: boolean }, invitationId: string, accept: boolean) {
      if (!user.emailVerified) throw new ForbiddenError('Verify your email address first: only a verified address can answer an invitation');
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

    async removeMember(userId: string, teamId: string, memberId: string) {
      await ownedTeam(userId, teamId);
      if (!(await repo.removeMember(teamId, memberId))) throw new NotFoundError('Member not found');
      return repo.membersOf(teamId);
    },
  };
}

export type TeamsService = ReturnType<typeof teamsService>;
