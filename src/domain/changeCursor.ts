import { InvalidParameterError } from './errors.ts';
import { canonicalId, UUID_PATTERN as UUID } from './ids.ts';
import { parseIsoDate } from './exportParams.ts';

/** A position in a resource's change order: (updatedAt in Unix ms, row id). */
export interface ChangeKey {
  t: number;
  id: string;
}

// Row ids of the incremental resources (sessions, crash groups) are UUIDs; this one sorts
// after all of them, so (t − 1, MAX_ID) starts a window exactly at t.
const MAX_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/**
 * The cursor is opaque to clients (docs/export.md): `v1.` and the base64url of "t:id", so its
 * inside can change with a new version prefix and old cursors are still read or refused clearly.
 */
export function encodeCursor(k: ChangeKey): string {
  return `v1.${Buffer.from(`${k.t}:${k.id}`).toString('base64url')}`;
}

export class CursorParamError extends InvalidParameterError {}

/**
 * Crash occurrence ids (a SHA-256 in hex; older layouts' ids) are not UUIDs: they are compared
 * as stored. MAX_ID matches too, so an empty first answer's cursor reads back.
 */
export const OCCURRENCE_ID = /^[0-9A-Za-z._:-]{1,128}$/;

/** `ids`: the resource's row ids; UUIDs are read in lower case (identifiers), others as given. */
export function decodeCursor(text: string, ids: RegExp = UUID): ChangeKey {
  const bad = () =>
    new CursorParamError('cursor is not a cursor returned by this API (nextCursor / X-Next-Cursor)', 'cursor');
  if (!text.startsWith('v1.')) throw bad();
  const m = /^(-?\d{1,16}):(.+)$/.exec(Buffer.from(text.slice(3), 'base64url').toString('utf8'));
  if (!m || !ids.test(m[2] ?? '')) throw bad();
  const id = m[2] ?? '';
  return { t: Number(m[1]), id: ids === UUID ? canonicalId(id) : id };
}

/**
 * Where an incremental read starts: after the cursor, or at updatedSince (inclusive), or not
 * incremental at all. Both at once is a 400: the cursor already says where to resume.
 */
export function changeStart(
  updatedSince: string | undefined,
  cursor: string | undefined,
  ids: RegExp = UUID,
): ChangeKey | undefined {
  if (updatedSince !== undefined && cursor !== undefined) {
    throw new CursorParamError('give updatedSince (first pull) or cursor (every later pull), not both');
  }
  if (cursor !== undefined) return decodeCursor(cursor, ids);
  if (updatedSince !== undefined) return { t: parseIsoDate('updatedSince', updatedSince).ms - 1, id: MAX_ID };
  return undefined;
}
