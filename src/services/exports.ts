import { InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import { canonicalId } from '../domain/ids.ts';
import { dateRange, paging, type ExportQuery } from '../domain/exportParams.ts';
import { changeStart, encodeCursor, OCCURRENCE_ID } from '../domain/changeCursor.ts';
import { pageMeta, type PageMeta } from '../domain/paging.ts';
import type { ChangeFilter, DateFilter, Encoding, ExportResource, Row } from '../repos/exportCore/types.ts';
import type { EventFilter } from '../repos/events.ts';
import type { SessionExportFilter, SessionsRepo } from '../repos/sessions.ts';
import type { ReleaseFilter } from './releases.ts';
import type { OccurrenceExportFilter } from '../repos/crashOccurrenceExport.ts';
import { CRASH_LEVELS } from '../domain/crashContext.ts';

export type { PageMeta };

export interface PageRequest {
  page?: number;
  limit?: number;
}

/** `nextCursor`: on an incremental read, where the next pull resumes (the last row's key). */
export type PageResult =
  | { meta: PageMeta; nextCursor?: string; kind: 'json'; data: Row[] }
  | { meta: PageMeta; nextCursor?: string; kind: Encoding; body: Buffer | string };

export interface StreamResult {
  chunks: AsyncGenerator<Buffer | string>;
  nextCursor?: string;
}

/**
 * One export endpoint: how its filter is read from the query, what is checked before any row
 * is read, and the store resource that reads the rows. `F` flows from the query to the store.
 */
export interface ExportEndpoint<F> {
  /** The resource name (file name of a CSV download). */
  readonly name: string;
  /** Throws InvalidParameterError (a 400) for a parameter it cannot read. */
  filter(q: ExportQuery): F;
  /** Runs before the first row is read, so its errors still get a status code. */
  check(projectId: string, filter: F): Promise<void>;
  readonly rows: ExportResource<F>;
}

const noCheck = async () => {};
const dates = (q: ExportQuery): DateFilter => dateRange(q.from, q.to);
const changes = (q: ExportQuery, ids?: RegExp): ChangeFilter => {
  const after = changeStart(q.updatedSince, q.cursor, ids);
  return after ? { changes: { after } } : {};
};
const changeOf = (f: unknown) => (f as ChangeFilter).changes;

/** `level=warning,info`: a comma-separated list of crash levels. */
function levelList(text: string): string[] {
  const levels = text.split(',').map((l) => l.trim());
  for (const l of levels) {
    if (!(CRASH_LEVELS as readonly string[]).includes(l)) {
      throw new InvalidParameterError(`level must be a comma-separated list of ${CRASH_LEVELS.join(', ')}`, 'level');
    }
  }
  return [...new Set(levels)];
}

/** The export endpoints, each reading from its table's owner. */
export function exportEndpoints(r: {
  sessions: SessionsRepo;
  crashes: ExportResource<ChangeFilter>;
  events: ExportResource<EventFilter>;
  network: ExportResource<DateFilter>;
  releases: ExportResource<ReleaseFilter>;
  crashOccurrences: ExportResource<OccurrenceExportFilter>;
}) {
  const sessions: ExportEndpoint<SessionExportFilter> = {
    name: 'sessions',
    filter: (q) => ({ ...dates(q), ...changes(q) }),
    check: noCheck,
    rows: r.sessions.export,
  };
  const crashes: ExportEndpoint<ChangeFilter> = {
    name: 'crashes',
    filter: (q) => changes(q),
    check: noCheck,
    rows: r.crashes,
  };
  const events: ExportEndpoint<EventFilter> = {
    name: 'events',
    // The query schema requires sessionId.
    filter: (q) => ({ sessionId: canonicalId(q.sessionId ?? '') }),
    // Events live in ClickHouse without their session's project check: a session of another
    // project (or none) is a 404, not an empty list.
    async check(projectId, f) {
      if (!(await r.sessions.exists(projectId, f.sessionId))) throw new NotFoundError('Session not found');
    },
    rows: r.events,
  };
  const network: ExportEndpoint<DateFilter> = { name: 'network', filter: dates, check: noCheck, rows: r.network };
  const releases: ExportEndpoint<ReleaseFilter> = {
    name: 'releases',
    filter: (q) => ({
      ...dates(q),
      ...(q.platform === undefined ? {} : { platform: q.platform }),
      ...(q.environment === undefined ? {} : { environment: q.environment }),
    }),
    check: noCheck,
    rows: r.releases,
  };
  const crashOccurrences: ExportEndpoint<OccurrenceExportFilter> = {
    name: 'crash-occurrences',
    filter: (q) => ({
      ...dates(q),
      ...changes(q, OCCURRENCE_ID),
      ...(q.groupId === undefined ? {} : { groupId: canonicalId(q.groupId) }),
      ...(q.environment === undefined ? {} : { environment: q.environment }),
      ...(q.level === undefined ? {} : { levels: levelList(q.level) }),
    }),
    check: noCheck,
    rows: r.crashOccurrences,
  };
  return { sessions, crashes, events, network, releases, crashOccurrences };
}

export type ExportEndpoints = ReturnType<typeof exportEndpoints>;

/** The read side: pages and streams of one project's rows. */
export function exportService(deps: { endpoints: ExportEndpoints; chunkRows: number; chunkBytes: number }) {
  const pin = async <F>(ep: ExportEndpoint<F>, projectId: string, filter: F) =>
    ep.rows.pin ? ep.rows.pin(projectId, filter) : filter;

  return {
    endpoints: deps.endpoints,

    async page<F>(
      ep: ExportEndpoint<F>,
      projectId: string,
      f: F,
      req: PageRequest,
      format: 'json' | Encoding,
    ): Promise<PageResult> {
      await ep.check(projectId, f);
      const p = paging(req.page, req.limit);
      const window = changeOf(f);
      // Offsets into a window whose rows move to its end as they change would skip rows: an
      // incremental read walks with the cursor, one page at a time.
      if (window && p.page !== 1) {
        throw new InvalidParameterError(
          'page does not apply with updatedSince or cursor: resume with the returned cursor',
        );
      }
      const filter = await pin(ep, projectId, f);
      const total = await ep.rows.count(projectId, filter);
      const meta = pageMeta(total, p.page, p.limit);
      // A page past the end is answered without asking the store for it.
      const past = p.offset >= total;
      let nextCursor: string | undefined;
      if (window) {
        const last =
          total === 0 ? undefined : await ep.rows.keyAt?.(projectId, filter, Math.min(p.offset + p.limit, total) - 1);
        nextCursor = encodeCursor(last ?? window.after);
      }
      if (format === 'json') {
        return {
          meta,
          nextCursor,
          kind: 'json',
          data: past ? [] : await ep.rows.page(projectId, filter, p.offset, p.limit),
        };
      }
      const body = await ep.rows.pageEncoded(projectId, filter, past ? 0 : p.offset, past ? 0 : p.limit, format);
      return { meta, nextCursor, kind: format, body };
    },

    /**
     * Checks run before the first byte, so they still answer with a status code. An
     * incremental stream's window is pinned first, so its cursor (the window's last key) can
     * go out in a header before the body.
     */
    async stream<F>(ep: ExportEndpoint<F>, projectId: string, f: F, enc: Encoding): Promise<StreamResult> {
      await ep.check(projectId, f);
      const filter = await pin(ep, projectId, f);
      const window = changeOf(filter);
      return {
        chunks: ep.rows.chunks(projectId, filter, enc, { rows: deps.chunkRows, bytes: deps.chunkBytes }),
        nextCursor: window ? encodeCursor(window.until ?? window.after) : undefined,
      };
    },
  };
}
