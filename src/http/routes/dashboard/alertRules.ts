import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { alertRuleRoutesOn } from '../alertRules.ts';
import { projectAccess, tags } from './common.ts';

/** The Alerts page: a project's rules, webhooks and delivery log, for the members of its team. */
export const alertRuleRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('preHandler', projectAccess(svc.projects));
    alertRuleRoutesOn(app, svc.alertRules, 'member', tags);
  };
