/** The page envelope every paginated list answers with (export JSON and dashboard lists alike). */
export interface PageMeta {
  total: number;
  page: number;
  limit: number;
  pages: number;
}

export function pageCount(total: number, limit: number): number {
  return Math.ceil(total / limit);
}

export function pageMeta(total: number, page: number, limit: number): PageMeta {
  return { total, page, limit, pages: pageCount(total, limit) };
}

export function pageEnvelope<T>(data: T[], total: number, page: number, limit: number): { data: T[] } & PageMeta {
  return { data, ...pageMeta(total, page, limit) };
}
