import * as S from '../schemas/fingerprintRules.ts';
import { errorResponse } from '../schemas/ingest.ts';
import { adminAuth } from '../auth.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';
import type { FingerprintRulesService } from '../../services/fingerprintRules.ts';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { SchemaTypes } from '../typeProvider.ts';

type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  SchemaTypes
>;

const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse, 422: errorResponse };

/** A project's fingerprint rules, the same under /api (ADMIN_TOKEN) and /api/dashboard (a member's session). */
export function fingerprintRuleRoutesOn(
  r: App,
  svc: FingerprintRulesService,
  tags: string[],
  security?: { [label: string]: string[] }[],
): void {
  const base = { tags, ...(security ? { security } : {}) };

  r.get(
    '/projects/:projectId/fingerprint-rules',
    {
      schema: { ...base, params: S.projectParams, response: { 200: S.ruleList, ...errors } },
    },
    async (req) => ({ items: await svc.list(req.params.projectId) }),
  );

  r.post(
    '/projects/:projectId/fingerprint-rules',
    {
      schema: { ...base, params: S.projectParams, body: S.ruleCreateBody, response: { 201: S.rule, ...errors } },
    },
    async (req, reply) => reply.code(201).send(await svc.create(req.params.projectId, req.body)),
  );

  r.get(
    '/projects/:projectId/fingerprint-rules/:ruleId',
    {
      schema: { ...base, params: S.ruleParams, response: { 200: S.rule, ...errors } },
    },
    async (req) => svc.get(req.params.projectId, req.params.ruleId),
  );

  r.patch(
    '/projects/:projectId/fingerprint-rules/:ruleId',
    {
      schema: { ...base, params: S.ruleParams, body: S.rulePatchBody, response: { 200: S.rule, ...errors } },
    },
    async (req) => svc.update(req.params.projectId, req.params.ruleId, req.body),
  );

  r.delete(
    '/projects/:projectId/fingerprint-rules/:ruleId',
    {
      schema: { ...base, params: S.ruleParams, response: { ...errors } },
    },
    async (req, reply) => {
      await svc.remove(req.params.projectId, req.params.ruleId);
      return reply.code(204).send();
    },
  );
}

/** /api: the operator's management API. */
export const fingerprintRuleRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('onRequest', adminAuth(svc.adminToken));
    fingerprintRuleRoutesOn(app, svc.fingerprintRules, ['management'], [{ adminToken: [] }]);
  };
