import * as A from '../schemas/admin.ts';
import { errorResponse, okResponse } from '../schemas/ingest.ts';
import { adminAuth } from '../auth.ts';
import { HttpError } from '../errors.ts';
import { ProjectNotFoundError } from '../../domain/errors.ts';
import { optionalBody } from '../validation.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';

const security = [{ adminToken: [] }];
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse, 422: errorResponse };

/** Management API under /api: projects and their keys, authenticated with ADMIN_TOKEN. */
export const adminRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('onRequest', adminAuth(svc.adminToken));

    app.post(
      '/projects',
      {
        schema: {
          tags: ['management'],
          security,
          body: A.projectCreateBody,
          response: {
            201: { type: 'object', properties: { project: A.project, apiKey: { type: 'string' } } },
            ...errors,
          },
        },
      },
      async (req, reply) => {
        const created = await svc.projects.createProject(req.body.name);
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/projects',
      {
        schema: {
          tags: ['management'],
          security,
          description: 'every project, oldest first (at most `limit`)',
          querystring: {
            type: 'object',
            properties: { limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 1000 } },
          },
          response: { 200: { type: 'object', properties: { items: { type: 'array', items: A.project } } }, ...errors },
        },
      },
      async (req) => ({ items: await svc.projects.listProjects(req.query.limit) }),
    );

    app.get(
      '/projects/:projectId',
      {
        schema: { tags: ['management'], security, params: A.projectIdParams, response: { 200: A.project, ...errors } },
      },
      async (req) => {
        const p = await svc.projects.getProject(req.params.projectId);
        if (!p) throw new ProjectNotFoundError();
        return p;
      },
    );

    app.patch(
      '/projects/:projectId',
      {
        schema: {
          tags: ['management'],
          security,
          params: A.projectIdParams,
          body: A.projectPatchBody,
          response: { 200: A.project, ...errors },
          description:
            'Rename, set alert recipients, set the browser origins allowed on /ingest (allowedOrigins), or give the project to a team (teamId, or teamOwnerEmail: the team that account owns) so its members see it in the dashboard.',
        },
      },
      async (req) => svc.projects.update(req.params.projectId, req.body),
    );

    app.post(
      '/projects/:projectId/keys',
      {
        preValidation: optionalBody,
        schema: {
          tags: ['management'],
          security,
          params: A.projectIdParams,
          body: A.keyCreateBody,
          response: { 201: { type: 'object', properties: { key: A.keyInfo, apiKey: { type: 'string' } } }, ...errors },
        },
      },
      async (req, reply) => {
        const created = await svc.projects.createKey(
          req.params.projectId,
          req.body?.name?.trim() || null,
          req.body?.scopes,
        );
        if (!created) throw new ProjectNotFoundError();
        return reply.code(201).send(created);
      },
    );

    app.post(
      '/keys/:keyId/deactivate',
      {
        schema: { tags: ['management'], security, params: A.keyIdParams, response: { 200: okResponse, ...errors } },
      },
      async (req) => {
        const r = await svc.projects.deactivateKey(req.params.keyId);
        if (!r) throw new HttpError(404, 'Key not found');
        await svc.keys.invalidate(r.keyHash);
        return { ok: true };
      },
    );
  };
