import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { alertEmailsSchema, projectNameSchema, keyCreateBody, keyNameSchema } from '../../schemas/admin.ts';
import { optionalBody } from '../../validation.ts';
import { params, tags, uuid } from './common.ts';

/** Projects & keys: create, rename, alert recipients; keys created with a name, renamed, deactivated. */
export const projectRoutes =
  (svc: Services): Routes =>
  async (app) => {
    const { projects } = svc;

    app.get('/projects', { schema: { tags } }, async (req) => ({ data: await projects.listFor(req.user.id) }));

    app.post(
      '/projects',
      {
        schema: {
          tags,
          body: {
            type: 'object',
            required: ['name'],
            properties: { name: projectNameSchema, teamId: uuid, keyName: keyNameSchema },
          },
        },
      },
      async (req, reply) => reply.code(201).send(await projects.createFor(req.user.id, req.body)),
    );

    app.patch(
      '/projects/:projectId',
      {
        schema: {
          tags,
          params: params('projectId'),
          body: {
            type: 'object',
            minProperties: 1,
            properties: { name: projectNameSchema, alertEmails: alertEmailsSchema },
          },
        },
      },
      async (req) => projects.updateFor(req.user.id, req.params.projectId, req.body),
    );

    app.post(
      '/projects/:projectId/keys',
      {
        preValidation: optionalBody,
        schema: { tags, params: params('projectId'), body: keyCreateBody },
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(await projects.createKeyFor(req.user.id, req.params.projectId, req.body?.name, req.body?.scopes)),
    );

    app.patch(
      '/projects/:projectId/keys/:keyId',
      {
        schema: {
          tags,
          params: params('projectId', 'keyId'),
          body: {
            type: 'object',
            required: ['name'],
            properties: { name: { ...keyNameSchema, type: ['string', 'null'] } },
          },
        },
      },
      async (req) => projects.renameKeyFor(req.user.id, req.params.projectId, req.params.keyId, req.body.name),
    );

    app.post(
      '/projects/:projectId/keys/:keyId/deactivate',
      {
        schema: { tags, params: params('projectId', 'keyId') },
      },
      async (req) => {
        const r = await projects.deactivateKeyFor(req.user.id, req.params.projectId, req.params.keyId);
        await svc.keys.invalidate(r.keyHash);
        return { ok: true };
      },
    );
  };
