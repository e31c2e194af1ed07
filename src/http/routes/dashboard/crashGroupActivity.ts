import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import * as S from '../../schemas/crashGroupActivity.ts';
import { params, projectAccess, tags } from './common.ts';

/** A crash group's chart, history, assignee and comments on its dashboard page; the signed-in user is the actor. */
export const crashGroupActivityRoutes =
  (svc: Services): Routes =>
  async (app) => {
    const a = svc.groupActivity;
    app.addHook('preHandler', projectAccess(svc.projects));
    const group = params('projectId', 'groupId');

    app.get(
      '/projects/:projectId/crash-groups/:groupId/activity',
      {
        schema: {
          tags,
          params: group,
          querystring: S.activityQuery,
          description: 'occurrences and users per hour (24h) or UTC day (14d, 90d)',
        },
      },
      async (req) => a.activity(req.params.projectId, req.params.groupId, req.query.range),
    );

    app.get(
      '/projects/:projectId/crash-groups/:groupId/history',
      {
        schema: {
          tags,
          params: group,
          description: 'badge, assignee, the team members it can be assigned to, status history and comments',
        },
      },
      async (req) => a.details(req.params.projectId, req.params.groupId),
    );

    app.put(
      '/projects/:projectId/crash-groups/:groupId/assignee',
      {
        schema: { tags, params: group, body: S.assigneeBody },
      },
      async (req) =>
        a.assign(req.params.projectId, req.params.groupId, req.body.userId, {
          name: req.user.email,
          userId: req.user.id,
        }),
    );

    app.post(
      '/projects/:projectId/crash-groups/:groupId/comments',
      {
        schema: { tags, params: group, body: S.commentBody },
      },
      async (req, reply) => {
        const c = await a.comment(
          req.params.projectId,
          req.params.groupId,
          { name: req.user.email, userId: req.user.id },
          req.body.body,
        );
        return reply.code(201).send(c);
      },
    );
  };
