import { adminAuth } from '../auth.ts';
import { HttpError } from '../errors.ts';
import { normalizeEmail } from '../../services/accounts.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';

const security = [{ adminToken: [] }];
const tags = ['operator'];
const userIdParams = {
  type: 'object',
  required: ['userId'],
  properties: { userId: { type: 'string', format: 'uuid' } },
} as const;

/** Operator actions on accounts under /api, authenticated with ADMIN_TOKEN. */
export const operatorRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('onRequest', adminAuth(svc.adminToken));
    const repo = svc.accounts.repo;

    app.get(
      '/users',
      {
        schema: {
          tags,
          security,
          querystring: {
            type: 'object',
            required: ['email'],
            properties: { email: { type: 'string', maxLength: 320 } },
          },
        },
      },
      async (req) => ({ data: await repo.findUsersByEmail(normalizeEmail(req.query.email)) }),
    );

    // Suspension turns off the keys of every team the user owns; each is dropped from the key
    // cache here and, through Redis, in every other process, so they answer 401 at once (and
    // within the cache TTL, <= 5 s, even if the invalidation message is lost).
    app.post('/users/:userId/suspend', { schema: { tags, security, params: userIdParams } }, async (req) => {
      const r = await repo.suspend(req.params.userId);
      if (!r) throw new HttpError(404, 'User not found');
      await Promise.all(r.keyHashes.map((h) => svc.keys.invalidate(h)));
      return { ok: true, user: r.user, keysDeactivated: r.keyHashes.length };
    });

    app.post('/users/:userId/unsuspend', { schema: { tags, security, params: userIdParams } }, async (req) => {
      const r = await repo.unsuspend(req.params.userId);
      if (!r) throw new HttpError(404, 'User not found');
      // The cache may hold these keys as inactive: drop them so they work again at once.
      await Promise.all(r.keyHashes.map((h) => svc.keys.invalidate(h)));
      return { ok: true, user: r.user, keysReactivated: r.keyHashes.length };
    });
  };
