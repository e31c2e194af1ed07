import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { dateRange } from '../../../domain/exportParams.ts';
import { dateParam, paging, params, projectAccess, tags } from './common.ts';
import { RELEASE_SORTS } from '../../../services/releases.ts';

const text = { type: 'string', maxLength: 100 } as const;
const environment = { type: 'string', maxLength: 64 } as const;
const range = { from: dateParam, to: dateParam, platform: text, environment } as const;

/** The Releases page: release health per version and platform, the daily trend, two releases compared. */
export const releaseRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('preHandler', projectAccess(svc.projects));

    app.get(
      '/projects/:projectId/releases',
      {
        schema: {
          tags,
          params: params('projectId'),
          description:
            'versions of the range (default: the last 14 days), each over all platforms (or the one filtered on) ' +
            'with a row per platform, in the order asked for (default: newest version first, semver order); crash-free ' +
            'figures with their 95 % Wilson score interval and whether they are significantly worse than the previous ' +
            "version's; every version of the range (newest first) and the daily series of every version",
          querystring: {
            type: 'object',
            properties: {
              ...range,
              ...paging,
              sort: { type: 'string', enum: [...RELEASE_SORTS], default: 'version' },
              order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
            },
          },
        },
      },
      async (req) => {
        const { from, to, platform, environment, page, limit, sort, order } = req.query;
        const r = dateRange(from || undefined, to || undefined);
        const only = { ...(platform ? { platform } : {}), ...(environment ? { environment } : {}) };
        return svc.releases.page(req.params.projectId, { ...r, ...only }, page, limit, sort, order);
      },
    );

    app.get(
      '/projects/:projectId/releases/compare',
      {
        schema: {
          tags,
          params: params('projectId'),
          querystring: {
            type: 'object',
            required: ['a', 'b'],
            properties: {
              from: dateParam,
              to: dateParam,
              a: { ...text, description: 'app version of the first release' },
              aPlatform: { ...text, description: 'its platform; left out or empty: all platforms together' },
              b: { ...text, description: 'app version of the second release' },
              bPlatform: { ...text, description: 'its platform; left out or empty: all platforms together' },
            },
          },
        },
      },
      async (req) => {
        const q = req.query;
        return svc.releases.compare(
          req.params.projectId,
          dateRange(q.from || undefined, q.to || undefined),
          { appVersion: q.a, platform: q.aPlatform },
          { appVersion: q.b, platform: q.bPlatform },
        );
      },
    );
  };
