import * as S from '../schemas/alertRules.ts';
import { errorResponse } from '../schemas/ingest.ts';
import { adminAuth } from '../auth.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';
import type { AlertRulesService, Actor } from '../../services/alertRules.ts';
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
/** Creating past a project's cap (ALERT_RULES_MAX_PER_PROJECT, WEBHOOKS_MAX_PER_PROJECT) is a 409. */
const createErrors = { ...errors, 409: errorResponse };

/**
 * The routes of a project's alert rules, webhooks and delivery log, the same under /api
 * (ADMIN_TOKEN) and /api/dashboard (a team member's session): only the auth and who vouches
 * for rule addresses differ.
 */
export function alertRuleRoutesOn(
  r: App,
  svc: AlertRulesService,
  by: Actor,
  tags: string[],
  security?: { [label: string]: string[] }[],
): void {
  const base = { tags, ...(security ? { security } : {}) };

  r.get(
    '/projects/:projectId/alert-rules',
    {
      schema: { ...base, params: S.projectParams, response: { 200: S.listOf(S.rule), ...errors } },
    },
    async (req) => ({ items: await svc.listRules(req.params.projectId) }),
  );

  r.post(
    '/projects/:projectId/alert-rules',
    {
      schema: { ...base, params: S.projectParams, body: S.ruleCreateBody, response: { 201: S.rule, ...createErrors } },
    },
    async (req, reply) => reply.code(201).send(await svc.createRule(req.params.projectId, req.body, by)),
  );

  r.get(
    '/projects/:projectId/alert-rules/:ruleId',
    {
      schema: { ...base, params: S.ruleParams, response: { 200: S.rule, ...errors } },
    },
    async (req) => svc.getRule(req.params.projectId, req.params.ruleId),
  );

  r.patch(
    '/projects/:projectId/alert-rules/:ruleId',
    {
      schema: { ...base, params: S.ruleParams, body: S.rulePatchBody, response: { 200: S.rule, ...errors } },
    },
    async (req) => svc.updateRule(req.params.projectId, req.params.ruleId, req.body, by),
  );

  r.delete(
    '/projects/:projectId/alert-rules/:ruleId',
    {
      schema: { ...base, params: S.ruleParams, response: { ...errors } },
    },
    async (req, reply) => {
      await svc.deleteRule(req.params.projectId, req.params.ruleId, by);
      return reply.code(204).send();
    },
  );

  r.get(
    '/projects/:projectId/webhooks',
    {
      schema: { ...base, params: S.projectParams, response: { 200: S.listOf(S.webhook), ...errors } },
    },
    async (req) => ({ items: await svc.listWebhooks(req.params.projectId) }),
  );

  r.post(
    '/projects/:projectId/webhooks',
    {
      schema: {
        ...base,
        params: S.projectParams,
        body: S.webhookCreateBody,
        response: { 201: S.webhookCreated, ...createErrors },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.createWebhook(req.params.projectId, req.body)),
  );

  r.patch(
    '/projects/:projectId/webhooks/:webhookId',
    {
      schema: { ...base, params: S.webhookParams, body: S.webhookPatchBody, response: { 200: S.webhook, ...errors } },
    },
    async (req) => svc.updateWebhook(req.params.projectId, req.params.webhookId, req.body),
  );

  r.delete(
    '/projects/:projectId/webhooks/:webhookId',
    {
      schema: { ...base, params: S.webhookParams, response: { ...errors } },
    },
    async (req, reply) => {
      await svc.deleteWebhook(req.params.projectId, req.params.webhookId);
      return reply.code(204).send();
    },
  );

  r.post(
    '/projects/:projectId/webhooks/:webhookId/test',
    {
      schema: {
        ...base,
        params: S.webhookParams,
        description:
          'queues a signed `webhook.test` delivery through the outbox (as alerts go); ' +
          'its result shows in the delivery log',
        response: {
          202: { type: 'object', properties: { deliveryId: { type: 'string' }, status: { type: 'string' } } },
          ...errors,
        },
      },
    },
    async (req, reply) => reply.code(202).send(await svc.testWebhook(req.params.projectId, req.params.webhookId)),
  );

  r.get(
    '/projects/:projectId/webhook-deliveries',
    {
      schema: {
        ...base,
        params: S.projectParams,
        querystring: S.deliveriesQuery,
        response: { 200: S.listOf(S.delivery), ...errors },
      },
    },
    async (req) => ({ items: await svc.deliveries(req.params.projectId, req.query.webhookId, req.query.limit) }),
  );
}

/** /api: the operator's management API. */
export const alertRuleRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('onRequest', adminAuth(svc.adminToken));
    alertRuleRoutesOn(app, svc.alertRules, 'operator', ['management'], [{ adminToken: [] }]);
  };
