import * as S from '../schemas/crashGroups.ts';
import * as A from '../schemas/crashGroupActivity.ts';
import * as I from '../schemas/crashInsights.ts';
import { TRAIL_STEPS, TRAIL_WINDOW_SECONDS } from '../../domain/crashTrail.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { ADMIN_ACTOR } from '../../services/crashGroups.ts';
import { errorResponse } from '../schemas/ingest.ts';
import { adminAuth } from '../auth.ts';
import { HttpError } from '../errors.ts';
import { ProjectNotFoundError } from '../../domain/errors.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';

const security = [{ adminToken: [] }];
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse, 422: errorResponse };

/** Crash-group workflow under /api, authenticated with ADMIN_TOKEN. */
export const crashGroupRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('onRequest', adminAuth(svc.adminToken));

    async function notFound(projectId: string): Promise<never> {
      const p = await svc.projects.getProject(projectId);
      throw p ? new HttpError(404, 'Crash group not found') : new ProjectNotFoundError();
    }

    app.get(
      '/projects/:projectId/crash-groups/:groupId',
      {
        schema: {
          tags: ['management'],
          security,
          params: S.crashGroupParams,
          response: { 200: S.crashGroup, ...errors },
        },
      },
      async (req) => {
        const g = await svc.crashGroups.view(req.params.projectId, req.params.groupId);
        return g ?? notFound(req.params.projectId);
      },
    );

    app.patch(
      '/projects/:projectId/crash-groups/:groupId',
      {
        schema: {
          tags: ['management'],
          security,
          params: S.crashGroupParams,
          body: S.crashGroupPatchBody,
          description:
            'Any move between open, acknowledged, resolved and ignored. Setting the current status is a no-op.',
          response: { 200: S.crashGroup, ...errors },
        },
      },
      async (req) => {
        const { projectId, groupId } = req.params;
        const r = await svc.crashGroups.setStatus(projectId, groupId, req.body.status, ADMIN_ACTOR);
        if (r.outcome === 'not-found') return notFound(projectId);
        return svc.crashGroups.withAlert(r.group);
      },
    );

    app.post(
      '/projects/:projectId/crash-groups/:groupId/merge',
      {
        schema: {
          tags: ['management'],
          security,
          params: S.crashGroupParams,
          body: S.crashGroupMergeBody,
          description:
            'Merges the groups of `groupIds` into this one and answers with it. A merged group leaves the lists; ' +
            'its id answers with the group it was merged into. Naming groups already merged into this one is a no-op.',
          response: { 200: S.crashGroup, ...errors },
        },
      },
      async (req) => {
        const { projectId, groupId } = req.params;
        const r = await svc.crashGroups.merge(projectId, groupId, req.body.groupIds, ADMIN_ACTOR);
        if (r.outcome === 'not-found') return notFound(projectId);
        return svc.crashGroups.withAlert(r.group);
      },
    );

    // The group's activity (history, assignee, comments, chart); the actor is "admin".
    const a = svc.groupActivity;
    const found = <T>(projectId: string, p: Promise<T>) =>
      p.catch(async (err: unknown) => {
        if (err instanceof NotFoundError) return notFound(projectId);
        throw err;
      });

    app.get(
      '/projects/:projectId/crash-groups/:groupId/activity',
      {
        schema: {
          tags: ['management'],
          security,
          params: S.crashGroupParams,
          querystring: A.activityQuery,
          response: errors,
        },
      },
      async (req) => found(req.params.projectId, a.activity(req.params.projectId, req.params.groupId, req.query.range)),
    );

    app.get(
      '/projects/:projectId/crash-groups/:groupId/history',
      {
        schema: {
          tags: ['management'],
          security,
          params: S.crashGroupParams,
          response: errors,
          description: 'badge, assignee, team members, status history (who, when, from what) and comments',
        },
      },
      async (req) => found(req.params.projectId, a.details(req.params.projectId, req.params.groupId)),
    );

    app.put(
      '/projects/:projectId/crash-groups/:groupId/assignee',
      {
        schema: { tags: ['management'], security, params: S.crashGroupParams, body: A.assigneeBody, response: errors },
      },
      async (req) =>
        found(req.params.projectId, a.assign(req.params.projectId, req.params.groupId, req.body.userId, ADMIN_ACTOR)),
    );

    app.post(
      '/projects/:projectId/crash-groups/:groupId/comments',
      {
        schema: {
          tags: ['management'],
          security,
          params: S.crashGroupParams,
          body: A.commentBody,
          response: { 201: A.comment, ...errors },
        },
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(
            await found(
              req.params.projectId,
              a.comment(req.params.projectId, req.params.groupId, ADMIN_ACTOR, req.body.body),
            ),
          ),
    );

    // Suspects and the trail before the crash, as on the crash page.
    const insights = svc.crashInsights;
    app.get(
      '/projects/:projectId/crash-groups/:groupId/suspects',
      {
        schema: {
          tags: ['management'],
          security,
          params: S.crashGroupParams,
          querystring: I.suspectsQuery,
          response: { 200: I.suspects, ...errors },
        },
      },
      async (req) =>
        found(req.params.projectId, insights.suspects(req.params.projectId, req.params.groupId, req.query.days)),
    );

    app.get(
      '/projects/:projectId/crash-groups/:groupId/trail',
      {
        schema: {
          tags: ['management'],
          security,
          params: S.crashGroupParams,
          querystring: I.trailQuery,
          response: { 200: I.trail, ...errors },
        },
      },
      async (req) =>
        found(
          req.params.projectId,
          insights.trail(
            req.params.projectId,
            req.params.groupId,
            req.query.window ?? TRAIL_WINDOW_SECONDS.default,
            req.query.steps ?? TRAIL_STEPS.default,
          ),
        ),
    );
  };
