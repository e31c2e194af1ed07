import * as S from '../schemas/ingest.ts';
import { canonicalId } from '../../domain/ids.ts';
import { apiKeyAuth } from '../auth.ts';
import { rateLimit } from '../rateLimit.ts';
import { decodeBody } from '../bodyDecoding.ts';
import { BodyBudget } from '../bodyBudget.ts';
import { ingestCorsHeaders, ingestOriginCheck } from '../cors.ts';
import type { Routes } from '../typeProvider.ts';
import type { BodyArrayLimit, PrototypeKeys } from '../sanitize.ts';
import type { Services } from '../../services/index.ts';

const security = [{ apiKey: [] }];

const lower = (v: unknown) => (typeof v === 'string' ? canonicalId(v) : v);

/**
 * Session and request ids are UUIDs, the same whatever their letter case: one spelling (lower
 * case) from here on, so Postgres lookups, the session cache and the batch-vs-event check see
 * one id. The raw bytes handed to ClickHouse keep the client's spelling; the ingest table
 * reads session ids as UUIDs and its view lower-cases request ids (clickhouse/004_one_ingest_table.sql).
 */
async function lowerCaseIds(req: { body: unknown }) {
  const b = req.body as Record<string, unknown> | null;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) return;
  b.sessionId = lower(b.sessionId);
  for (const [list, field] of [
    ['events', 'sessionId'],
    ['requests', 'id'],
  ] as const) {
    const items = b[list];
    if (!Array.isArray(items)) continue;
    for (const it of items)
      if (it !== null && typeof it === 'object' && field in it)
        (it as Record<string, unknown>)[field] = lower((it as Record<string, unknown>)[field]);
  }
}
const errors = {
  400: S.errorResponse,
  401: S.errorResponse,
  403: S.errorResponse,
  404: S.errorResponse,
  422: S.errorResponse,
  429: S.errorResponse,
};

/** The five /ingest routes; thin: schema, then one ingestion call. */
export const ingestRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('onSend', ingestCorsHeaders);
    app.addHook('onRequest', apiKeyAuth(svc.keys, 'ingest'));
    app.addHook('onRequest', ingestOriginCheck);
    app.addHook('onRequest', rateLimit(svc.limits.ingest));
    app.addHook('preParsing', decodeBody);
    // Counted before parsing: a flood of large bodies is refused (503) instead of held in memory.
    const bodies = new BodyBudget(svc.config.ingestInflightBytes);
    app.addHook('preParsing', bodies.preParsing);
    app.addHook('onResponse', bodies.release);
    app.addHook('onRequestAbort', bodies.release);
    app.addHook('preValidation', lowerCaseIds);

    app.post(
      '/session',
      {
        schema: { tags: ['ingest'], security, body: S.sessionStartBody, response: { 201: S.okResponse, ...errors } },
      },
      async (req, reply) => {
        await svc.ingestion.startSession(req.projectId, req.body);
        return reply.code(201).send({ ok: true });
      },
    );

    app.post(
      '/session/end',
      {
        schema: { tags: ['ingest'], security, body: S.sessionEndBody, response: { 200: S.okResponse, ...errors } },
      },
      async (req) => {
        await svc.ingestion.endSession(req.projectId, req.body.sessionId, req.body.endedAt);
        return { ok: true };
      },
    );

    app.post(
      '/events',
      {
        config: { bodyArray: { key: 'events', max: S.MAX_EVENTS } } satisfies BodyArrayLimit,
        schema: { tags: ['ingest'], security, body: S.eventsBody, response: { 201: S.okCountResponse, ...errors } },
      },
      async (req, reply) => {
        const count = await svc.ingestion.events(req.projectId, req.body.sessionId, req.body.events, req.rawBody);
        return reply.code(201).send({ ok: true, count });
      },
    );

    app.post(
      '/crash',
      {
        config: {
          prototypeKeys: 'keep',
          freeFormFields: ['environment', 'userId', 'tags', 'context', 'breadcrumbs', 'level'],
        } satisfies PrototypeKeys,

        schema: { tags: ['ingest'], security, body: S.crashBody, response: { 201: S.okResponse, ...errors } },
      },
      async (req, reply) => {
        await svc.ingestion.crash(req.projectId, req.body);
        return reply.code(201).send({ ok: true });
      },
    );

    app.post(
      '/network',
      {
        config: { bodyArray: { key: 'requests', max: S.MAX_REQUESTS } } satisfies BodyArrayLimit,
        schema: { tags: ['ingest'], security, body: S.networkBody, response: { 201: S.okCountResponse, ...errors } },
      },
      async (req, reply) => {
        const count = await svc.ingestion.network(req.projectId, req.body.sessionId, req.body.requests, req.rawBody);
        return reply.code(201).send({ ok: true, count });
      },
    );
  };
