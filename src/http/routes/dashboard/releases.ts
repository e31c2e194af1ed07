import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { dateRange } from '../../../domain/exportParams.ts';
import { dateParam, paging, params, projectAccess, tags } from './common.ts';

const text = { type: 'string', maxLength: 100 } as const;
const range = { from: dateParam, to: dateParam, platform: text, environment: { type: 'string', maxLength: 64 } } as const;

/** The Releases page: release health per version and platform, the daily trend, two releases compared. */
export const releaseRoutes = (svc: Services): Routes => async (app) => {
  app.addHook('preHandler', projectAccess(svc.projects));

  app.get('/projects/:projectId/releases', {
    schema: {
      tags, params: params('projectId'),
      description: 'releases of the range (default: the last 14 days), most recently seen first, with the daily series of the page\'s releases',
      querystring: { type: 'object', properties: { ...range, ...paging } },
    },
  }, async (req) => {
    const { from, to, platform, environment, page, limit } = req.query;
    const r = dateRange(from || undefined, to || undefined);
    return svc.releases.page(req.params.projectId, { ...r, ...(platform ? { platform } : {}), ...(environment ? { environment } : {}) }, page, limit);
  });

  app.get('/projects/:projectId/releases/compare', {
    schema: {
      tags, params: params('projectId'),
      querystring: {
        type: 'object', required: ['a', 'b'],
        properties: {
          from: dateParam, to: dateParam,
          a: { ...text, description: 'app version of the first release' }, aPlatform: { ...text, default: '' },
          b: { ...text, description: 'app version of the second release' }, bPlatform: { ...text, default: '' },
        },
      },
    },
  }, async (req) => {
    const q = req.query;
    return svc.releases.compare(req.params.projectId, dateRange(q.from || undefined, q.to || undefined),
      { appVersion: q.a, platform: q.aPlatform }, { appVersion: q.b, platform: q.bPlatform });
  });
};
