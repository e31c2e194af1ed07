import type { ProjectChange, ProjectsRepo } from '../repos/projects.ts';
import type { ApiKeysRepo } from '../repos/apiKeys.ts';
import type { AccountsRepo } from '../repos/accounts.ts';
import { ForbiddenError, NotFoundError, ProjectNotFoundError, ValidationError } from '../domain/errors.ts';
import { recipientRows } from '../domain/alertRecipients.ts';
import { normalizeOrigins } from '../domain/origins.ts';
import { normalizeEmail } from './accounts.ts';
import { keyScopes, scopesBeyondRole } from '../domain/apiKey.ts';
import { hashToken } from '../domain/ids.ts';
import type { AlertRecipientsRepo } from '../repos/alertRecipients.ts';
import { ruleEmailsOf } from '../repos/alertRules.ts';
import { memberEmailsOfTeam } from '../repos/accounts.ts';
import type { Queryable } from '../stores/postgres/port.ts';
import { serviceSecret } from '../repos/serviceSecrets.ts';
import { UNSUBSCRIBE_SECRET, unsubscribeSignatureValid } from '../domain/unsubscribe.ts';

/** A project's team as the dashboard checks it: membership, and whether its owner is suspended. */
export interface ProjectAccess {
  teamId: string;
  ownerSuspended: boolean;
  role: 'owner' | 'member';
}

const cleanName = (name: string) => name.trim() || name;

/** A project's allowed browser origins, normalised; 422 naming the entries that are not origins. */
function origins(list: string[] | null | undefined): string[] | null | undefined {
  if (list === undefined || list === null) return list;
  const r = normalizeOrigins(list);
  if (r.invalid.length) {
    throw new ValidationError(
      r.invalid.map((i) => ({
        path: `/allowedOrigins/${i}`,
        message: 'must be an origin like https://app.example.com (scheme, host and port only)',
      })),
    );
  }
  return r.origins;
}
const cleanEmails = (emails: string[] | null | undefined) => {
  if (emails === undefined) return undefined;
  const list = emails === null ? [] : [...new Set(emails.map(normalizeEmail))];
  // An empty list from the dashboard form means "the server default", as null does.
  return list.length ? list : null;
};

function notSuspended(t: { ownerSuspended: boolean }) {
  if (t.ownerSuspended) throw new ForbiddenError("The team's owner is suspended: its projects cannot get new keys");
}

/**
 * Projects and their keys: the management API's use cases (operator, any project) and the
 * dashboard's (a user, on their teams' projects only).
 */
export function projectsService(
  projects: ProjectsRepo,
  keys: ApiKeysRepo,
  accounts: AccountsRepo,
  recipients: AlertRecipientsRepo,
  db: Queryable,
  /** A project's settings changed (a cache of them drops its entry). */
  changed: (projectId: string) => void = () => {},
) {
  /**
   * Makes the confirmation state follow the project's alert list. `by`: the operator
   * (ADMIN_TOKEN) vouches for every address; from the dashboard only the team members' own
   * addresses count as confirmed, and any other is sent a confirmation email (by the worker)
   * and gets alerts once confirmed.
   */
  async function syncRecipients(projectId: string, emails: string[] | null, by: 'operator' | 'member') {
    const teamId = await projects.teamOf(projectId);
    // The project's rules list addresses too (src/services/alertRules.ts): the one rule decides both.
    const { list, confirmed } = recipientRows({
      projectList: emails,
      ruleEmails: await ruleEmailsOf(db, projectId),
      members: teamId === null ? [] : await memberEmailsOfTeam(db, teamId),
      vouched: by === 'operator' ? (emails ?? []) : [],
    });
    await recipients.sync(projectId, list, confirmed);
  }

  /** Another team's project is answered like a missing one, revealing nothing. */
  async function access(userId: string, projectId: string): Promise<ProjectAccess> {
    const teamId = await projects.teamOf(projectId);
    const m = teamId === null ? null : await accounts.membership(userId, teamId);
    if (!m) throw new ProjectNotFoundError();
    return m;
  }

  return {
    access,
    createProject: projects.createProject,
    getProject: projects.getProject,
    listProjects: projects.listAll,
    alertRecipients: recipients.ofProject,

    /** The address whose confirmation link carried this token, now confirmed; null when unknown. */
    async confirmRecipient(token: string) {
      const r = await recipients.confirm(hashToken(token));
      if (!r) return null;
      const p = await projects.getProject(r.projectId);
      return { email: r.email, projectName: p?.name ?? '' };
    },

    /**
     * The signed link of an alert: the address stops getting this project's alerts. False when
     * the signature does not fit (the link was not the service's) or the project is gone.
     */
    async unsubscribe(projectId: string, email: string, signature: string): Promise<{ projectName: string } | null> {
      if (!unsubscribeSignatureValid(await serviceSecret(db, UNSUBSCRIBE_SECRET), projectId, email, signature))
        return null;
      const p = await projects.getProject(projectId);
      if (!p) return null;
      await recipients.unsubscribe(projectId, email);
      return { projectName: p.name };
    },

    /**
     * The operator's change of a project: name, alert recipients, and the team it belongs to
     * (so that a project made with the CLI appears in that team's dashboard). The team is named
     * by id or by its owner's email; null takes the project out of every team.
     */
    async update(
      projectId: string,
      c: Omit<ProjectChange, 'teamId'> & { teamId?: string | null; teamOwnerEmail?: string },
    ) {
      let teamId: string | null | undefined = c.teamId;
      if (c.teamOwnerEmail !== undefined) {
        const t = await accounts.findTeam({ ownerEmail: normalizeEmail(c.teamOwnerEmail) });
        if (!t) throw new NotFoundError('No team is owned by an account with this email');
        teamId = t.id;
      } else if (typeof teamId === 'string' && !(await accounts.findTeam({ id: teamId }))) {
        throw new NotFoundError('Team not found');
      }
      const p = await projects.update(projectId, {
        name: c.name === undefined ? undefined : cleanName(c.name),
        alertEmails: c.alertEmails,
        teamId,
        allowedOrigins: origins(c.allowedOrigins),
        inAppPackages: c.inAppPackages,
      });
      if (!p) throw new ProjectNotFoundError();
      changed(projectId);
      if (c.alertEmails !== undefined) await syncRecipients(projectId, p.alertEmails, 'operator');
      return p;
    },

    /**
     * A new key for an existing project, or null when the project does not exist. `scopes`
     * defaults to both; a key made while the team's owner is suspended is born suspended.
     */
    async createKey(projectId: string, name: string | null = null, scopes?: readonly string[]) {
      if (!(await projects.exists(projectId))) return null;
      const teamId = await projects.teamOf(projectId);
      const suspended = teamId !== null && (await accounts.ownerSuspended(teamId));
      return keys.insert(projectId, name, keyScopes(scopes), suspended);
    },

    deactivateKey: keys.deactivate,
    findKeyByHash: keys.findByHash,

    // ---- the dashboard, for a signed-in user ------------------------------------------------

    /** The projects of every team of the user with their keys and alert addresses: four queries, whatever the count. */
    async listFor(userId: string) {
      const teams = new Map((await accounts.teamsOf(userId)).map((t) => [t.id, t.name]));
      const list = await projects.ofTeams([...teams.keys()]);
      const ids = list.map((p) => p.id);
      const [byProject, states] = [await keys.listForProjects(ids), await recipients.ofProjects(ids)];
      // Each key with the address of the account that made it (null: the operator's, or older).
      const makers = await accounts.emailsOf([
        ...new Set(
          [...byProject.values()]
            .flat()
            .map((k) => k.createdBy)
            .filter((x): x is string => x !== null),
        ),
      ]);
      const withMaker = (k: { createdBy: string | null }) => ({
        ...k,
        createdByEmail: k.createdBy === null ? null : (makers.get(k.createdBy) ?? null),
      });
      return list.map((p) => ({
        ...p,
        teamName: teams.get(p.teamId) ?? '',
        keys: (byProject.get(p.id) ?? []).map(withMaker),
        alertRecipients: states.get(p.id) ?? [],
      }));
    },

    /** Without a team, the project goes to the user's own team (they own exactly one). */
    async createFor(userId: string, b: { name: string; teamId?: string; keyName?: string }) {
      const teams = await accounts.teamsOf(userId);
      const team = b.teamId
        ? teams.find((t) => t.id === b.teamId)
        : (teams.find((t) => t.role === 'owner') ?? teams[0]);
      if (!team) throw new NotFoundError('Team not found');
      notSuspended(team);
      const created = await projects.createProject(cleanName(b.name), team.id, b.keyName?.trim() || null, userId, true);
      return {
        project: { ...created.project, teamId: team.id, teamName: team.name },
        apiKey: created.apiKey,
        key: created.key,
        // for the app's setup snippet: ingest only, so a key pulled out of an app exports nothing
        ingestApiKey: created.ingestApiKey,
        ingestKey: created.ingestKey,
      };
    },

    async updateFor(
      userId: string,
      projectId: string,
      c: { name?: string; alertEmails?: string[] | null; inAppPackages?: string[] },
    ) {
      await access(userId, projectId);
      const p = await projects.update(projectId, {
        name: c.name === undefined ? undefined : cleanName(c.name),
        alertEmails: cleanEmails(c.alertEmails),
        inAppPackages: c.inAppPackages,
      });
      if (!p) throw new ProjectNotFoundError();
      changed(projectId);
      if (c.alertEmails === undefined) return p;
      await syncRecipients(projectId, p.alertEmails, 'member');
      return { ...p, alertRecipients: await recipients.ofProject(projectId) };
    },

    /** A dashboard key: ingest-only unless asked otherwise, and only the scopes the member's role may give. */
    async createKeyFor(userId: string, projectId: string, name: string | undefined, scopes?: readonly string[]) {
      const m = await access(userId, projectId);
      notSuspended(m);
      const asked = keyScopes(scopes ?? ['ingest']);
      if (!asked.length) throw new ValidationError([{ path: '/scopes', message: 'a key needs at least one scope' }]);
      const beyond = scopesBeyondRole(m.role, asked);
      if (beyond.length) throw new ForbiddenError(`Only the team's owner can make ${beyond.join(', ')} keys`);
      return keys.insert(projectId, name?.trim() || null, asked, false, userId);
    },

    async renameKeyFor(userId: string, projectId: string, keyId: string, name: string | null) {
      await access(userId, projectId);
      const k = await keys.rename(projectId, keyId, name?.trim() || null);
      if (!k) throw new NotFoundError('Key not found');
      return k;
    },

    /** Returns the key's hash, for the caller to drop it from the key caches. */
    async deactivateKeyFor(userId: string, projectId: string, keyId: string) {
      await access(userId, projectId);
      const r = await keys.deactivate(keyId, projectId);
      if (!r) throw new NotFoundError('Key not found');
      return r;
    },
  };
}
