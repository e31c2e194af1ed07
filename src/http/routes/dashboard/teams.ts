import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { params, tags } from './common.ts';

/** The Team page: teams with their members; the owner invites and removes members; invitees answer; members leave. */
export const teamRoutes =
  (svc: Services): Routes =>
  async (app) => {
    const { teams } = svc;

    app.get('/teams', { schema: { tags } }, async (req) => ({ data: await teams.list(req.user.id) }));

    app.post(
      '/teams/:teamId/members',
      {
        schema: {
          tags,
          params: params('teamId'),
          body: {
            type: 'object',
            required: ['email'],
            properties: { email: { type: 'string', format: 'email', maxLength: 320 } },
          },
        },
      },
      async (req, reply) => reply.code(201).send(await teams.invite(req.user.id, req.params.teamId, req.body.email)),
    );

    app.delete(
      '/teams/:teamId/invitations/:invitationId',
      {
        schema: { tags, params: params('teamId', 'invitationId') },
      },
      async (req) => {
        await teams.revokeInvitation(req.user.id, req.params.teamId, req.params.invitationId);
        return { ok: true };
      },
    );

    app.get('/invitations', { schema: { tags } }, async (req) => ({
      data: await teams.invitationsFor(req.user),
      emailVerified: req.user.emailVerified,
    }));

    app.post(
      '/invitations/:invitationId/accept',
      { schema: { tags, params: params('invitationId') } },
      async (req) => ({ ok: true, teams: await teams.answer(req.user, req.params.invitationId, true) }),
    );

    app.post(
      '/invitations/:invitationId/decline',
      { schema: { tags, params: params('invitationId') } },
      async (req) => ({ ok: true, teams: await teams.answer(req.user, req.params.invitationId, false) }),
    );

    app.post('/teams/:teamId/leave', { schema: { tags, params: params('teamId') } }, async (req) => ({
      ok: true,
      teams: await teams.leave(req.user.id, req.params.teamId),
    }));

    // The owner decides what happens to the keys the member made: revoked (the default) or reassigned to the owner.
    app.delete(
      '/teams/:teamId/members/:userId',
      {
        schema: {
          tags,
          params: params('teamId', 'userId'),
          querystring: {
            type: 'object',
            properties: { keys: { type: 'string', enum: ['revoke', 'reassign'], default: 'revoke' } },
          },
        },
      },
      async (req) => {
        const r = await teams.removeMember(req.user.id, req.params.teamId, req.params.userId, req.query.keys);
        await Promise.all(r.keyHashes.map((h) => svc.keys.invalidate(h)));
        return { data: r.members, keysRevoked: r.keysRevoked };
      },
    );
  };
