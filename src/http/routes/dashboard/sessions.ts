import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { SESSION_SORTS } from '../../../repos/sessions.ts';
import { SESSION_STATUSES } from '../../../domain/sessionState.ts';
import { dateParam, paging, params, projectAccess, tags } from './common.ts';

const text = { type: 'string', maxLength: 200 } as const;

/** The Sessions page (list, chart, filters) and a session's detail, timeline and network log. */
export const sessionRoutes =
  (svc: Services): Routes =>
  async (app) => {
    const { dashboard } = svc;
    app.addHook('preHandler', projectAccess(svc.projects));

    app.get(
      '/projects/:projectId/sessions',
      {
        schema: {
          tags,
          params: params('projectId'),
          querystring: {
            type: 'object',
            properties: {
              from: dateParam,
              to: dateParam,
              status: { type: 'string', enum: [...SESSION_STATUSES] },
              q: { ...text, description: 'a user id (or its start) or the start of a session id' },
              platform: text,
              appVersion: text,
              hasCrash: { type: 'boolean' },
              networkErrors: { type: 'boolean' },
              sort: { type: 'string', enum: [...SESSION_SORTS], default: 'started' },
              order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
              ...paging,
            },
          },
        },
      },
      async (req) => {
        const { q, networkErrors, ...rest } = req.query;
        return dashboard.sessions(req.params.projectId, { ...rest, search: q, hasNetworkErrors: networkErrors });
      },
    );

    app.get(
      '/projects/:projectId/sessions/facets',
      {
        schema: { tags, params: params('projectId'), description: 'the platforms and app versions the filters offer' },
      },
      async (req) => {
        return dashboard.sessionFacets(req.params.projectId);
      },
    );

    app.get(
      '/projects/:projectId/sessions/:sessionId',
      {
        schema: { tags, params: params('projectId', 'sessionId') },
      },
      async (req) => {
        return dashboard.session(req.params.projectId, req.params.sessionId);
      },
    );

    app.get(
      '/projects/:projectId/sessions/:sessionId/events',
      {
        schema: {
          tags,
          params: params('projectId', 'sessionId'),
          querystring: {
            type: 'object',
            properties: {
              after: { type: 'integer', minimum: 0, maximum: 9_007_199_254_740_991 },
              limit: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
            },
          },
        },
      },
      async (req) => {
        return dashboard.events(req.params.projectId, req.params.sessionId, req.query.after, req.query.limit);
      },
    );

    app.get(
      '/projects/:projectId/sessions/:sessionId/network',
      {
        schema: { tags, params: params('projectId', 'sessionId'), querystring: { type: 'object', properties: paging } },
      },
      async (req) => {
        return dashboard.network(req.params.projectId, req.params.sessionId, req.query.page, req.query.limit);
      },
    );

    app.get(
      '/projects/:projectId/daily',
      {
        schema: {
          tags,
          params: params('projectId'),
          querystring: { type: 'object', properties: { from: dateParam, to: dateParam } },
        },
      },
      async (req) => {
        return { data: await dashboard.daily(req.params.projectId, req.query.from, req.query.to) };
      },
    );
  };
