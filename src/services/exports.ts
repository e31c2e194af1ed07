import { NotFoundError } from '../domain/errors.ts';
import { dateRange, paging, type ExportQuery } from '../domain/exportParams.ts';
import { pageMeta, type PageMeta } from '../domain/paging.ts';
import type { DateFilter, Encoding, ExportResource, Row } from '../repos/exportCore/types.ts';
import type { EventFilter } from '../repos/events.ts';
import type { SessionsRepo } from '../repos/sessions.ts';

export type { PageMeta };

export interface PageRequest {
  page?: number;
  limit?: number;
}

export type PageResult =
  | { meta: PageMeta; kind: 'json'; data: Row[] }
  | { meta: PageMeta; kind: Encoding; body: Buffer | string };

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

/** The four export endpoints, each reading from its table's owner. */
export function exportEndpoints(r: {
  sessions: SessionsRepo;
  crashes: ExportResource<Record<string, never>>;
  events: ExportResource<EventFilter>;
  network: ExportResource<DateFilter>;
}) {
  const sessions: ExportEndpoint<DateFilter> = { name: 'sessions', filter: dates, check: noCheck, rows: r.sessions.export };
  const crashes: ExportEndpoint<Record<string, never>> = { name: 'crashes', filter: () => ({}), check: noCheck, rows: r.crashes };
  const events: ExportEndpoint<EventFilter> = {
    name: 'events',
    // The query schema requires sessionId.
    filter: (q) => ({ sessionId: q.sessionId ?? '' }),
    // Events live in ClickHouse without their session's project check: a session of another
    // project (or none) is a 404, not an empty list.
    async check(projectId, f) {
      if (!(await r.sessions.exists(projectId, f.sessionId))) throw new NotFoundError('Session not found');
    },
    rows: r.events,
  };
  const network: ExportEndpoint<DateFilter> = { name: 'network', filter: dates, check: noCheck, rows: r.network };
  return { sessions, crashes, events, network };
}

export type ExportEndpoints = ReturnType<typeof exportEndpoints>;

/** The read side: pages and streams of one project's rows. */
export function exportService(deps: { endpoints: ExportEndpoints; chunkRows: number }) {
  return {
    endpoints: deps.endpoints,

    async page<F>(ep: ExportEndpoint<F>, projectId: string, filter: F, req: PageRequest, format: 'json' | Encoding): Promise<PageResult> {
      await ep.check(projectId, filter);
      const p = paging(req.page, req.limit);
      const total = await ep.rows.count(projectId, filter);
      const meta = pageMeta(total, p.page, p.limit);
      // A page past the end is answered without asking the store for it.
      const past = p.offset >= total;
      if (format === 'json') {
        return { meta, kind: 'json', data: past ? [] : await ep.rows.page(projectId, filter, p.offset, p.limit) };
      }
      const body = await ep.rows.pageEncoded(projectId, filter, past ? 0 : p.offset, past ? 0 : p.limit, format);
      return { meta, kind: format, body };
    },

    /** Checks run before the first byte, so they still answer with a status code. */
    async stream<F>(ep: ExportEndpoint<F>, projectId: string, filter: F, enc: Encoding): Promise<AsyncGenerator<Buffer | string>> {
      await ep.check(projectId, filter);
      return ep.rows.chunks(projectId, filter, enc, deps.chunkRows);
    },
  };
}

export type ExportService = ReturnType<typeof exportService>;
