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
    /** Every team of the user with its members: two queries whatever the number of teams. */
    async list(userId: string) {
      const teams = await repo.teamsOf(userId);
      const members = await repo.membersOfTeams(teams.map((t) => t.id));
      return teams.map((t) => ({ ...t, members: members.get(t.id) ?? [] }));
    },

    async addMember(userId: string, teamId: string, email: string) {
      await ownedTeam(userId, teamId);
      const r = await repo.addMember(teamId, normalizeEmail(email));
      if (r === 'no-user') throw new NotFoundError('No account with this email: ask them to sign up first');
      if (r === 'exists') throw new ConflictError('Already a member of this team');
      return repo.membersOf(teamId);
    },

    async removeMember(userId: string, teamId: string, memberId: string) {
      await ownedTeam(userId, teamId);
      if (!(await repo.removeMember(teamId, memberId))) throw new NotFoundError('Member not found');
      return repo.membersOf(teamId);
    },
  };
}

export type TeamsService = ReturnType<typeof teamsService>;
