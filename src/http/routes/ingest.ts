import * as S from '../schemas/ingest.ts';
import { apiKeyAuth } from '../auth.ts';
import { rateLimit } from '../rateLimit.ts';
import { decodeBody } from '../bodyDecoding.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';

const security = [{ apiKey: [] }];
const errors = { 400: S.errorResponse, 401: S.errorResponse, 403: S.errorResponse, 404: S.errorResponse, 422: S.errorResponse, 429: S.errorResponse };

/** The five /ingest routes; thin: schema, then one ingestion call. */
export const ingestRoutes = (svc: Services): Routes => async (app) => {
  app.addHook('onRequest', apiKeyAuth(svc.keys, 'ingest'));
  app.addHook('onRequest', rateLimit(svc.limits.ingest));
  app.addHook('preParsing', decodeBody);

  app.post('/session', {
    schema: { tags: ['ingest'], security, body: S.sessionStartBody, response: { 201: S.okResponse, ...errors } },
  }, async (req, reply) => {
    await svc.ingestion.startSession(req.projectId, req.body);
    return reply.code(201).send({ ok: true });
  });

  app.post('/session/end', {
    schema: { tags: ['ingest'], security, body: S.sessionEndBody, response: { 200: S.okResponse, ...errors } },
  }, async (req) => {
    await svc.ingestion.endSession(req.projectId, req.body.sessionId, req.body.endedAt);
    return { ok: true };
  });

  app.post('/events', {
    schema: { tags: ['ingest'], security, body: S.eventsBody, response: { 201: S.okCountResponse, ...errors } },
  }, async (req, reply) => {
    const count = await svc.ingestion.events(req.projectId, req.body.sessionId, req.body.events, req.rawBody);
    return reply.code(201).send({ ok: true, count });
  });

  app.post('/crash', {
    schema: { tags: ['ingest'], security, body: S.crashBody, response: { 201: S.okResponse, ...errors } },
  }, async (req, reply) => {
    await svc.ingestion.crash(req.projectId, req.body);
    return reply.code(201).send({ ok: true });
  });

  app.post('/network', {
    schema: { tags: ['ingest'], security, body: S.networkBody, response: { 201: S.okCountResponse, ...errors } },
  }, async (req, reply) => {
    const count = await svc.ingestion.network(req.projectId, req.body.sessionId, req.body.requests, req.rawBody);
    return reply.code(201).send({ ok: true, count });
  });
};
