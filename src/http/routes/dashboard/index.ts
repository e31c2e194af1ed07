import type { Routes } from '../../typeProvider.ts';
import { csrfToken, originCheck, sessionAuth } from '../../sessionAuth.ts';
import { rateLimit } from '../../rateLimit.ts';
import type { Services } from '../../../services/index.ts';
import { teamRoutes } from './teams.ts';
import { projectRoutes } from './projects.ts';
import { sessionRoutes } from './sessions.ts';
import { crashGroupRoutes } from './crashGroups.ts';
import { artifactDashboardRoutes } from '../artifacts.ts';
import { releaseRoutes } from './releases.ts';
import { crashGroupActivityRoutes } from './crashGroupActivity.ts';
import { alertRuleRoutes } from './alertRules.ts';
import { fingerprintRuleRoutes } from './fingerprintRules.ts';
import { crashInsightsRoutes } from './crashInsights.ts';

/**
 * /api/dashboard: what a signed-in user sees and does, limited to their teams' projects. The
 * hooks apply to every plugin below; each plugin is one page's routes, thin over its service.
 */
export const dashboardRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('onRequest', originCheck(svc.config.publicUrl));
    app.addHook('onRequest', sessionAuth(svc.accounts));
    app.addHook('onRequest', rateLimit(svc.limits.dashboard, 'user'));
    app.addHook('onRequest', csrfToken);
    await app.register(teamRoutes(svc));
    await app.register(projectRoutes(svc));
    await app.register(sessionRoutes(svc));
    await app.register(crashGroupRoutes(svc));
    await app.register(artifactDashboardRoutes(svc));
    await app.register(crashGroupActivityRoutes(svc));
    await app.register(crashInsightsRoutes(svc));
    await app.register(releaseRoutes(svc));
    await app.register(alertRuleRoutes(svc));
    await app.register(fingerprintRuleRoutes(svc));
  };
