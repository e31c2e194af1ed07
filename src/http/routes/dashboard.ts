import type { FastifyRequest } from 'fastify';
import { HttpError } from '../errors.ts';
import { csrfToken, originCheck, sessionAuth } from '../sessionAuth.ts';
import { projectPatchBody } from '../schemas/admin.ts';
import { CRASH_GROUP_STATUSES, type CrashGroupStatus } from '../../domain/crashGroupStatus.ts';
import { normalizeEmail } from '../../services/accounts.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';
import { DAY_MS, DateParamError, parseIsoDate, type ParsedDate } from '../../domain/exportParams.ts';
import { dashboardGroup } from '../../services/dashboard.ts';

const uuid = { type: 'string', format: 'uuid' } as const;
// Typed by its names (const), so a route's req.params is derived from the schema it validates.
const params = <const N extends readonly string[]>(...names: N) => ({
  type: 'object', required: names, properties: Object.fromEntries(names.map((n) => [n, uuid])) as Record<N[number], typeof uuid>,
}) as const;
const paging = { page: { type: 'integer', minimum: 1, default: 1 }, limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 } } as const;
const dateParam = { type: 'string', maxLength: 40 } as const;
const tags = ['dashboard'];
const DAY = DAY_MS;

/**
 * An ISO 8601 date or date-time (the export's strict parser); a date-only upper bound
 * includes that whole UTC day, a date-time one is exclusive.
 */
function parseDate(name: string, v: string | undefined, upper: boolean): number | undefined {
  if (v === undefined || v === '') return undefined;
  let d: ParsedDate;
  try {
    d = parseIsoDate(name, v);
  } catch (err) {
    if (err instanceof DateParamError) throw new HttpError(400, `Invalid query parameter ${name}: expected an ISO 8601 date or date-time`);
    throw err;
  }
  return d.dateOnly && upper ? d.ms + DAY : d.ms;
}

/** /api/dashboard: what a signed-in user sees and does, limited to their teams' projects. */
export const dashboardRoutes = (svc: Services): Routes => async (app) => {
  const { accounts, dashboard, projects } = svc;
  const repo = accounts.repo;
  app.addHook('onRequest', originCheck(svc.config.publicUrl));
  app.addHook('onRequest', sessionAuth(accounts));
  app.addHook('onRequest', csrfToken);

  /** Another team's project is answered like a missing one (404), revealing nothing. */
  async function access(req: Pick<FastifyRequest, 'user'> & { params: { projectId: string } }) {
    const team = await accounts.projectTeamFor(req.user.id, req.params.projectId);
    if (!team) throw new HttpError(404, 'Project not found');
    return team;
  }

  async function ownedTeam(userId: string, teamId: string) {
    const team = (await repo.teamsOf(userId)).find((t) => t.id === teamId);
    if (!team) throw new HttpError(404, 'Team not found');
    if (team.role !== 'owner') throw new HttpError(403, "Only the team's owner can change its members");
    return team;
  }

  const notSuspended = (t: { ownerSuspended: boolean }) => {
    if (t.ownerSuspended) throw new HttpError(403, "The team's owner is suspended: its projects cannot get new keys");
  };

  // ---- teams -------------------------------------------------------------------------------
  app.get('/teams', { schema: { tags } }, async (req) => {
    const teams = await repo.teamsOf(req.user.id);
    return { data: await Promise.all(teams.map(async (t) => ({ ...t, members: await repo.membersOf(t.id) }))) };
  });

  app.post('/teams/:teamId/members', {
    schema: { tags, params: params('teamId'), body: { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email', maxLength: 320 } } } },
  }, async (req, reply) => {
    await ownedTeam(req.user.id, req.params.teamId);
    const r = await repo.addMember(req.params.teamId, normalizeEmail(req.body.email));
    if (r === 'no-user') throw new HttpError(404, 'No account with this email: ask them to sign up first');
    if (r === 'exists') throw new HttpError(409, 'Already a member of this team');
    return reply.code(201).send({ data: await repo.membersOf(req.params.teamId) });
  });

  app.delete('/teams/:teamId/members/:userId', {
    schema: { tags, params: params('teamId', 'userId') },
  }, async (req) => {
    await ownedTeam(req.user.id, req.params.teamId);
    if (!(await repo.removeMember(req.params.teamId, req.params.userId))) throw new HttpError(404, 'Member not found');
    return { data: await repo.membersOf(req.params.teamId) };
  });

  // ---- projects and keys -------------------------------------------------------------------
  app.get('/projects', { schema: { tags } }, async (req) => {
    const list = await accounts.projectsOf(req.user.id);
    return { data: await Promise.all(list.map(async (p) => ({ ...p, keys: await projects.listKeys(p.id) }))) };
  });

  app.post('/projects', {
    schema: { tags, body: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, teamId: uuid } } },
  }, async (req, reply) => {
    const teams = await repo.teamsOf(req.user.id);
    // Without a teamId the project goes to the user's own team (they own exactly one).
    const team = req.body.teamId ? teams.find((t) => t.id === req.body.teamId) : (teams.find((t) => t.role === 'owner') ?? teams[0]);
    if (!team) throw new HttpError(404, 'Team not found');
    notSuspended(team);
    const created = await projects.createProject(req.body.name.trim() || req.body.name, team.id);
    return reply.code(201).send({ project: { ...created.project, teamId: team.id, teamName: team.name }, apiKey: created.apiKey });
  });

  app.patch('/projects/:projectId', {
    schema: { tags, params: params('projectId'), body: projectPatchBody },
  }, async (req) => {
    await access(req);
    const emails = req.body.alertEmails === null ? null : [...new Set(req.body.alertEmails.map(normalizeEmail))];
    return projects.setAlertEmails(req.params.projectId, emails && emails.length ? emails : null);
  });

  app.post('/projects/:projectId/keys', { schema: { tags, params: params('projectId') } }, async (req, reply) => {
    notSuspended(await access(req));
    return reply.code(201).send(await projects.createKey(req.params.projectId));
  });

  app.post('/projects/:projectId/keys/:keyId/deactivate', {
    schema: { tags, params: params('projectId', 'keyId') },
  }, async (req) => {
    await access(req);
    const keys = await projects.listKeys(req.params.projectId);
    if (!keys.some((k) => k.id === req.params.keyId)) throw new HttpError(404, 'Key not found');
    const r = await projects.deactivateKey(req.params.keyId);
    if (!r) throw new HttpError(404, 'Key not found');
    await svc.keys.invalidate(r.keyHash);
    return { ok: true };
  });

  // ---- sessions ----------------------------------------------------------------------------
  app.get('/projects/:projectId/sessions', {
    schema: {
      tags, params: params('projectId'),
      querystring: { type: 'object', properties: { from: dateParam, to: dateParam, status: { type: 'string', enum: ['active', 'completed', 'crashed'] }, ...paging } },
    },
  }, async (req) => {
    await access(req);
    const q = req.query;
    return dashboard.sessions(req.params.projectId, {
      from: parseDate('from', q.from, false), to: parseDate('to', q.to, true), status: q.status, page: q.page, limit: q.limit,
    });
  });

  app.get('/projects/:projectId/sessions/:sessionId', {
    schema: { tags, params: params('projectId', 'sessionId') },
  }, async (req) => {
    await access(req);
    const session = await dashboard.session(req.params.projectId, req.params.sessionId);
    if (!session) throw new HttpError(404, 'Session not found');
    return { session, crashes: await dashboard.sessionCrashes(req.params.projectId, req.params.sessionId) };
  });

  app.get('/projects/:projectId/sessions/:sessionId/events', {
    schema: {
      tags, params: params('projectId', 'sessionId'),
      querystring: { type: 'object', properties: { after: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1, maximum: 1000, default: 500 } } },
    },
  }, async (req) => {
    await access(req);
    return dashboard.events(req.params.projectId, req.params.sessionId, req.query.after, req.query.limit);
  });

  app.get('/projects/:projectId/sessions/:sessionId/network', {
    schema: { tags, params: params('projectId', 'sessionId'), querystring: { type: 'object', properties: paging } },
  }, async (req) => {
    await access(req);
    return dashboard.network(req.params.projectId, req.params.sessionId, req.query.page, req.query.limit);
  });

  app.get('/projects/:projectId/daily', {
    schema: { tags, params: params('projectId'), querystring: { type: 'object', properties: { from: dateParam, to: dateParam } } },
  }, async (req) => {
    await access(req);
    const to = parseDate('to', req.query.to, true) ?? Math.floor(Date.now() / DAY) * DAY + DAY;
    const from = parseDate('from', req.query.from, false) ?? to - 30 * DAY;
    if (from >= to) throw new HttpError(400, 'from must be before to');
    if (to - from > 366 * DAY) throw new HttpError(400, 'The chart covers at most 366 days');
    return { data: await dashboard.daily(req.params.projectId, from, to) };
  });

  // ---- crash groups ------------------------------------------------------------------------
  app.get('/projects/:projectId/crash-groups', {
    schema: {
      tags, params: params('projectId'),
      querystring: { type: 'object', properties: { status: { type: 'string', enum: [...CRASH_GROUP_STATUSES] }, ...paging } },
    },
  }, async (req) => {
    await access(req);
    return dashboard.crashGroups(req.params.projectId, req.query.status, req.query.page, req.query.limit);
  });

  app.get('/projects/:projectId/crash-groups/:groupId', {
    schema: { tags, params: params('projectId', 'groupId') },
  }, async (req) => {
    await access(req);
    const g = await dashboard.crashGroup(req.params.projectId, req.params.groupId);
    if (!g) throw new HttpError(404, 'Crash group not found');
    return g;
  });

  app.patch('/projects/:projectId/crash-groups/:groupId', {
    schema: {
      tags, params: params('projectId', 'groupId'),
      body: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: [...CRASH_GROUP_STATUSES] } } },
    },
  }, async (req) => {
    await access(req);
    const { projectId, groupId } = req.params;
    // The one workflow implementation (shared with the management API); the dashboard shape is read back.
    const r = await svc.crashGroups.setStatus(projectId, groupId, req.body.status);
    if (r.outcome === 'not-found') throw new HttpError(404, 'Crash group not found');
    return dashboardGroup(r.group);
  });
};
