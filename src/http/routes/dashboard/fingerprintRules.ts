import type { Routes } from '../../typeProvider.ts';
import type { Services } from '../../../services/index.ts';
import { fingerprintRuleRoutesOn } from '../fingerprintRules.ts';
import { projectAccess, tags } from './common.ts';

/** The project settings' fingerprint rules, for the members of its team. */
export const fingerprintRuleRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('preHandler', projectAccess(svc.projects));
    fingerprintRuleRoutesOn(app, svc.fingerprintRules, tags);
  };
