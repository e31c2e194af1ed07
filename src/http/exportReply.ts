import type { FastifyReply } from 'fastify';
import { HttpError } from './errors.ts';
import type { ExportQuery } from '../domain/exportParams.ts';
import type { Encoding } from '../repos/exportCore/types.ts';
import type { PageMeta } from '../services/exports.ts';

/** stream=true needs a row format: csv, parquet, or ndjson when none is asked for. */
export function resolveFormat(q: ExportQuery): { format: 'json' | Encoding; stream: boolean } {
  if (!q.stream) return { format: q.format ?? 'json', stream: false };
  if (q.format === 'json')
    throw new HttpError(
      400,
      'stream=true returns csv, ndjson or parquet; use format=csv, format=ndjson or format=parquet',
    );
  return { format: q.format ?? 'ndjson', stream: true };
}

export function contentHeaders(resource: string, enc: Encoding): Record<string, string> {
  if (enc === 'csv')
    return {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${resource}.csv"`,
    };
  if (enc === 'parquet') {
    return {
      'content-type': 'application/vnd.apache.parquet',
      'content-disposition': `attachment; filename="${resource}.parquet"`,
    };
  }
  return { 'content-type': 'application/x-ndjson; charset=utf-8' };
}

/** Where an incremental read resumes; also in the JSON envelope as `nextCursor`. */
export const NEXT_CURSOR_HEADER = 'X-Next-Cursor';

export function setPageHeaders(reply: FastifyReply, m: PageMeta): void {
  reply.header('X-Total-Count', m.total).header('X-Page', m.page).header('X-Limit', m.limit).header('X-Pages', m.pages);
}
