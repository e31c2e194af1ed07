import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { params, tags } from './common.ts';

/** The Team page: teams with their members; the owner adds and removes members. */
export const teamRoutes = (svc: Services): Routes => async (app) => {
  const { teams } = svc;

  app.get('/teams', { schema: { tags } }, async (req) => ({ data: await teams.list(req.user.id) }));

  app.post('/teams/:teamId/members', {
    schema: { tags, params: params('teamId'), body: { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email', maxLength: 320 } } } },
  }, async (req, reply) => reply.code(201).send({ data: await teams.addMember(req.user.id, req.params.teamId, req.body.email) }));

  app.delete('/teams/:teamId/members/:userId', {
    schema: { tags, params: params('teamId', 'userId') },
  }, async (req) => ({ data: await teams.removeMember(req.user.id, req.params.teamId, req.params.userId) }));
};
