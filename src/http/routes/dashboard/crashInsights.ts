import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import * as S from '../../schemas/crashInsights.ts';
import { TRAIL_STEPS, TRAIL_WINDOW_SECONDS } from '../../../domain/crashTrail.ts';
import { params, projectAccess, tags } from './common.ts';

/** A crash group's suspects and trail before the crash, on its dashboard page. */
export const crashInsightsRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('preHandler', projectAccess(svc.projects));
    const group = params('projectId', 'groupId');

    app.get(
      '/projects/:projectId/crash-groups/:groupId/suspects',
      {
        schema: {
          tags,
          params: group,
          querystring: S.suspectsQuery,
          response: { 200: S.suspects },
          description:
            'values of release, platform, OS version, device model, network type, environment and tags ' +
            "over-represented in the group against the project's baseline",
        },
      },
      async (req) => svc.crashInsights.suspects(req.params.projectId, req.params.groupId, req.query.days),
    );

    app.get(
      '/projects/:projectId/crash-groups/:groupId/trail',
      {
        schema: {
          tags,
          params: group,
          querystring: S.trailQuery,
          response: { 200: S.trail },
          description:
            'the most common sequences of screens, taps, custom events and failing requests ' +
            "before the group's latest crashes",
        },
      },
      async (req) =>
        svc.crashInsights.trail(
          req.params.projectId,
          req.params.groupId,
          req.query.window ?? TRAIL_WINDOW_SECONDS.default,
          req.query.steps ?? TRAIL_STEPS.default,
        ),
    );
  };
