import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { CRASH_GROUP_STATUSES } from '../../../domain/crashGroupStatus.ts';
import { paging, params, projectAccess, tags } from './common.ts';
import { crashGroupMergeBody } from '../../schemas/crashGroups.ts';

/** The Crashes page and a crash group's page: facts, occurrences, status. */
export const crashGroupRoutes = (svc: Services): Routes => async (app) => {
  const { dashboard } = svc;
  app.addHook('preHandler', projectAccess(svc.projects));

  app.get('/projects/:projectId/crash-groups', {
    schema: {
      tags, params: params('projectId'),
      querystring: {
        type: 'object',
        properties: {
          status: { type: 'string', enum: [...CRASH_GROUP_STATUSES] },
          kind: { type: 'string', enum: ['fatal', 'nonfatal'], description: 'fatal crashes, or handled and other non-fatal errors' },
          sort: { type: 'string', enum: ['lastSeen', 'firstSeen', 'occurrences', 'users'], description: 'descending; lastSeen by default' },
          ...paging,
        },
      },
    },
  }, async (req) => {
    const { status, kind, sort, page, limit } = req.query;
    return dashboard.crashGroups(req.params.projectId, status, page, limit, { kind, sort });
  });

  app.get('/projects/:projectId/crash-groups/:groupId', {
    schema: { tags, params: params('projectId', 'groupId') },
  }, async (req) => {
    return dashboard.crashGroup(req.params.projectId, req.params.groupId);
  });

  app.get('/projects/:projectId/crash-groups/:groupId/occurrences', {
    schema: { tags, params: params('projectId', 'groupId'), querystring: { type: 'object', properties: paging } },
  }, async (req) => {
    return dashboard.occurrences(req.params.projectId, req.params.groupId, req.query.page, req.query.limit);
  });

  app.patch('/projects/:projectId/crash-groups/:groupId', {
    schema: {
      tags, params: params('projectId', 'groupId'),
      body: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: [...CRASH_GROUP_STATUSES] } } },
    },
  }, async (req) => {
    return dashboard.setStatus(req.params.projectId, req.params.groupId, req.body.status, { name: req.user.email, userId: req.user.id });
  });

  app.post('/projects/:projectId/crash-groups/:groupId/merge', {
    schema: { tags, params: params('projectId', 'groupId'), body: crashGroupMergeBody },
  }, async (req) => {
    return dashboard.mergeGroups(req.params.projectId, req.params.groupId, req.body.groupIds, { name: req.user.email, userId: req.user.id });
  });
};
