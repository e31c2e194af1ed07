import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { CRASH_GROUP_STATUSES } from '../../../domain/crashGroupStatus.ts';
import { paging, params, projectAccess, tags } from './common.ts';
import type { CrashLevel } from '../../../domain/crashContext.ts';

const scopeQuery = {
  level: {
    type: 'string',
    maxLength: 64,
    pattern: '^(fatal|error|warning|info)(,(fatal|error|warning|info)){0,3}$',
    description: 'comma-separated levels counted (default: fatal,error; kind=message: warning,info)',
  },
  environment: { type: 'string', maxLength: 64, description: 'only the occurrences of this environment' },
} as const;

const tagQuery = {
  type: 'string',
  maxLength: 240,
  pattern: '^[A-Za-z0-9_.:-]{1,32}=',
  description: 'key=value: only the occurrences with this tag',
} as const;

/** `screen=checkout`: a tag key never holds "=", so the first one splits it. */
function tagParam(v: string | undefined): { key: string; value: string } | undefined {
  if (v === undefined) return undefined;
  const i = v.indexOf('=');
  return { key: v.slice(0, i), value: v.slice(i + 1) };
}

const levelsParam = (v: string | undefined) =>
  v === undefined ? undefined : ([...new Set(v.split(','))] as CrashLevel[]);
import { crashGroupMergeBody } from '../../schemas/crashGroups.ts';

/** The Crashes page and a crash group's page: facts, occurrences, status. */
export const crashGroupRoutes =
  (svc: Services): Routes =>
  async (app) => {
    const { dashboard } = svc;
    app.addHook('preHandler', projectAccess(svc.projects));

    app.get(
      '/projects/:projectId/crash-groups',
      {
        schema: {
          tags,
          params: params('projectId'),
          querystring: {
            type: 'object',
            properties: {
              status: { type: 'string', enum: [...CRASH_GROUP_STATUSES] },
              kind: {
                type: 'string',
                enum: ['fatal', 'nonfatal', 'message'],
                description: 'fatal crashes, handled and other non-fatal errors, or messages (info, warning)',
              },
              ...scopeQuery,
              tag: tagQuery,
              q: {
                type: 'string',
                maxLength: 200,
                description:
                  'search: a substring of the message (its type included) or of the stack head (functions, files), any case',
              },
              sort: {
                type: 'string',
                enum: ['lastSeen', 'firstSeen', 'occurrences', 'users'],
                description: 'descending; lastSeen by default',
              },
              ...paging,
            },
          },
        },
      },
      async (req) => {
        const { status, kind, sort, page, limit, level, environment, tag, q } = req.query;
        return dashboard.crashGroups(req.params.projectId, status, page, limit, {
          kind,
          sort,
          levels: levelsParam(level),
          environment,
          tag: tagParam(tag),
          search: q,
        });
      },
    );

    app.get(
      '/projects/:projectId/crash-groups/:groupId',
      {
        schema: {
          tags,
          params: params('projectId', 'groupId'),
          querystring: { type: 'object', properties: { environment: scopeQuery.environment } },
        },
      },
      async (req) => {
        return dashboard.crashGroup(req.params.projectId, req.params.groupId, { environment: req.query.environment });
      },
    );

    app.get(
      '/projects/:projectId/crash-groups/:groupId/occurrences',
      {
        schema: {
          tags,
          params: params('projectId', 'groupId'),
          querystring: { type: 'object', properties: { ...paging, environment: scopeQuery.environment } },
        },
      },
      async (req) => {
        const { page, limit, environment } = req.query;
        return dashboard.occurrences(req.params.projectId, req.params.groupId, page, limit, { environment });
      },
    );

    app.get(
      '/projects/:projectId/crash-groups/:groupId/occurrence',
      {
        schema: {
          tags,
          params: params('projectId', 'groupId'),
          querystring: {
            type: 'object',
            properties: {
              index: {
                type: 'integer',
                minimum: 0,
                maximum: 1_000_000,
                default: 0,
                description: '0: the latest occurrence, 1: the one before, …',
              },
              environment: scopeQuery.environment,
            },
          },
        },
      },
      async (req) => {
        const { index, environment } = req.query;
        return dashboard.occurrence(req.params.projectId, req.params.groupId, index, { environment });
      },
    );

    app.patch(
      '/projects/:projectId/crash-groups/:groupId',
      {
        schema: {
          tags,
          params: params('projectId', 'groupId'),
          body: {
            type: 'object',
            required: ['status'],
            properties: { status: { type: 'string', enum: [...CRASH_GROUP_STATUSES] } },
          },
        },
      },
      async (req) => {
        return dashboard.setStatus(req.params.projectId, req.params.groupId, req.body.status, {
          name: req.user.email,
          userId: req.user.id,
        });
      },
    );

    app.post(
      '/projects/:projectId/crash-groups/:groupId/merge',
      {
        schema: { tags, params: params('projectId', 'groupId'), body: crashGroupMergeBody },
      },
      async (req) => {
        return dashboard.mergeGroups(req.params.projectId, req.params.groupId, req.body.groupIds, {
          name: req.user.email,
          userId: req.user.id,
        });
      },
    );
  };
