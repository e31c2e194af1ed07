// What the dashboard's route plugins share: their OpenAPI tag, the shapes of their params, and
// the check that the signed-in user may see the project a route names.
import type { FastifyRequest } from 'fastify';
import type { Services } from '../../../services/index.ts';

export const tags = ['dashboard'];
export const uuid = { type: 'string', format: 'uuid' } as const;

/** Path parameters, each a UUID; typed by its names (const), so a route's req.params is derived from it. */
export const params = <const N extends readonly string[]>(...names: N) =>
  ({
    type: 'object',
    required: names,
    properties: Object.fromEntries(names.map((n) => [n, uuid])) as Record<N[number], typeof uuid>,
  }) as const;

// Bounded, so `page=1e300` is a 400 rather than an OFFSET no store can take (a 500).
export const paging = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 },
  limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
} as const;

export const dateParam = { type: 'string', maxLength: 40 } as const;

/**
 * preHandler of a plugin whose every route is under /projects/:projectId: the user must belong to
 * the project's team (404 otherwise). Runs after the params schema, so projectId is a UUID.
 */
export const projectAccess = (projects: Services['projects']) => async (req: FastifyRequest) => {
  await projects.access(req.user.id, (req.params as { projectId: string }).projectId);
};
