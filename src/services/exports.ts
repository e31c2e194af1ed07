import { NotFoundError } from '../domain/errors.ts';
import { pageCount, paging } from '../domain/exportParams.ts';
import type { ExportResource, Encoding, Row, DateFilter } from '../repos/exportCore/types.ts';
import type { EventFilter } from '../repos/events.ts';
import type { SessionsRepo } from '../repos/sessions.ts';

/** The four export resources, each read from its table's owner. */
export interface ExportResources {
  sessions: ExportResource<DateFilter>;
  crashes: ExportResource<Record<string, never>>;
  events: ExportResource<EventFilter>;
  network: ExportResource<DateFilter>;
}

export type ExportName = keyof ExportResources;

export interface PageRequest {
  page?: number;
  limit?: number;
}

export interface PageMeta {
  total: number;
  page: number;
  limit: number;
  pages: number;
}

export type PageResult =
  | { meta: PageMeta; kind: 'json'; data: Row[] }
  | { meta: PageMeta; kind: Encoding; body: Buffer | string };

/** The read side: pages and streams of one project's rows. */
export function exportService(deps: { repo: ExportResources; sessions: SessionsRepo; chunkRows: number }) {
  async function requireSession(projectId: string, filter: unknown) {
    const sessionId = (filter as { sessionId?: string }).sessionId;
    if (sessionId !== undefined && !(await deps.sessions.exists(projectId, sessionId))) {
      throw new NotFoundError('Session not found');
    }
  }

  return {
    async page<F>(name: ExportName, projectId: string, filter: F, req: PageRequest, format: 'json' | Encoding): Promise<PageResult> {
      const res = deps.repo[name] as unknown as ExportResource<F>;
      await requireSession(projectId, filter);
      const p = paging(req.page, req.limit);
      const total = await res.count(projectId, filter);
      const meta = { total, page: p.page, limit: p.limit, pages: pageCount(total, p.limit) };
      // A page past the end is answered without asking the store for it.
      const past = p.offset >= total;
      if (format === 'json') {
        return { meta, kind: 'json', data: past ? [] : await res.page(projectId, filter, p.offset, p.limit) };
      }
      const body = await res.pageEncoded(projectId, filter, past ? 0 : p.offset, past ? 0 : p.limit, format);
      return { meta, kind: format, body };
    },

    /** Checks run before the first byte, so they still answer with a status code. */
    async stream<F>(name: ExportName, projectId: string, filter: F, enc: Encoding): Promise<AsyncGenerator<Buffer | string>> {
      const res = deps.repo[name] as unknown as ExportResource<F>;
      await requireSession(projectId, filter);
      return res.chunks(projectId, filter, enc, deps.chunkRows);
    },
  };
}

export type ExportService = ReturnType<typeof exportService>;
