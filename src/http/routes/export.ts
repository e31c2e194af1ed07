import type { FastifyReply, FastifyRequest } from 'fastify';
import * as S from '../schemas/export.ts';
import { errorResponse } from '../schemas/ingest.ts';
import { apiKeyAuth } from '../auth.ts';
import { rateLimit } from '../rateLimit.ts';
import { gzipOnSend } from '../compression.ts';
import { sendChunks } from '../streaming.ts';
import { contentHeaders, NEXT_CURSOR_HEADER, resolveFormat, setPageHeaders } from '../exportReply.ts';
import type { ExportQueryIn, ExportQuerySchema } from '../schemas/types.ts';
import type { Routes } from '../typeProvider.ts';
import type { Services } from '../../services/index.ts';
import { TooBusyError } from '../../domain/errors.ts';
import type { ExportEndpoint } from '../../services/exports.ts';

const security = [{ apiKey: [] }];
const errors = { 400: errorResponse, 401: errorResponse, 403: errorResponse, 404: errorResponse, 429: errorResponse };

/** The /export routes; thin: parse the query, then a page or a stream from the export service. */
export const exportRoutes =
  (svc: Services): Routes =>
  async (app) => {
    app.addHook('onRequest', apiKeyAuth(svc.keys, 'export'));
    app.addHook('onRequest', rateLimit(svc.limits.export));
    app.addHook('onSend', gzipOnSend);

    // `q` is the route's query as its own schema validated it (the type derived from that schema).
    async function respond<F>(ep: ExportEndpoint<F>, q: ExportQueryIn, req: FastifyRequest, reply: FastifyReply) {
      const filter = ep.filter(q);
      const { format, stream } = resolveFormat(q);
      if (stream && format !== 'json') {
        const release = await svc.exportStreams.acquire(req.projectId);
        if (!release)
          throw new TooBusyError(`At most ${svc.exportStreams.max} streamed exports at once per project`, 5);
        reply.raw.once('close', release);
        try {
          const s = await svc.exports.stream(ep, req.projectId, filter, format);
          const cursor: Record<string, string> = s.nextCursor ? { [NEXT_CURSOR_HEADER]: s.nextCursor } : {};
          return await sendChunks(
            req,
            reply,
            s.chunks,
            { ...contentHeaders(ep.name, format), ...cursor },
            svc.config.exportIdleTimeoutMs,
            {
              started: svc.metrics.streamStarted,
              ended: svc.metrics.streamEnded,
            },
          );
        } catch (err) {
          release();
          throw err;
        }
      }
      const r = await svc.exports.page(ep, req.projectId, filter, q, format);
      setPageHeaders(reply, r.meta);
      if (r.nextCursor) reply.header(NEXT_CURSOR_HEADER, r.nextCursor);
      if (r.kind === 'json')
        return r.nextCursor ? { data: r.data, ...r.meta, nextCursor: r.nextCursor } : { data: r.data, ...r.meta };
      return reply.headers(contentHeaders(ep.name, r.kind)).send(r.body);
    }

    const route = <F>(
      path: string,
      ep: ExportEndpoint<F>,
      summary: string,
      querystring: ExportQuerySchema,
      row: object,
    ) =>
      app.get(
        path,
        {
          schema: { tags: ['export'], summary, security, querystring, response: { 200: S.okResponse(row), ...errors } },
        },
        (req, reply) => respond(ep, req.query, req, reply),
      );

    const ep = svc.exports.endpoints;
    route(
      '/sessions',
      ep.sessions,
      'Sessions by (startedAt, id), filtered on startedAt; with updatedSince or cursor, the changed ones by (updatedAt, id)',
      S.sessionsQuery,
      S.sessionRow,
    );
    route(
      '/crashes',
      ep.crashes,
      'Crash groups by (firstSeenAt, id); with updatedSince or cursor, the changed ones by (updatedAt, id)',
      S.crashesQuery,
      S.crashRow,
    );
    route('/events', ep.events, 'Events of one session by sequenceNumber', S.eventsQuery, S.eventRow);
    route(
      '/releases',
      ep.releases,
      'Release health per (appVersion, platform) over from/to (sessions, users, crash-free %, adoption, new and regressed groups), most recently seen first',
      S.releasesQuery,
      S.releaseRow,
    );
    route(
      '/crash-occurrences',
      ep.crashOccurrences,
      'Crash occurrences with their context by (occurredAt, id), filtered on occurredAt, groupId, environment and level',
      S.crashOccurrencesQuery,
      S.crashOccurrenceRow,
    );

    route(
      '/network',
      ep.network,
      'Network logs by (timestamp, id), filtered on timestamp',
      S.networkQuery,
      S.networkRow,
    );
  };
