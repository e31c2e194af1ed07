import type { ClickHouse } from '../stores/clickhouse/port.ts';
import {
  addRefusable,
  InsertBatcher,
  INGEST_BATCH,
  RowsRefusedError,
  type QueueBudget,
} from '../stores/clickhouse/batcher.ts';
import type { Spool, SpoolSink } from '../stores/spool/spool.ts';
import { loggableError, type Log } from '../lib/log.ts';
import { payloadOf } from '../stores/spool/records.ts';
import { flaggedSessionOf, ingestLineChunks, reserialisedLine } from './ingestLines.ts';

const LF = 0x0a;
const CR = 0x0d;

/**
 * The pieces of one request body's line: its bytes as received (`raw`), or the body serialised
 * once more when sanitising changed it or when it holds line breaks (a pretty-printed body: a
 * custom event's `properties` is stored as the object's own text, and the NDJSON export embeds
 * it on one line).
 */
export function bodyLine(
  projectId: string,
  raw: Buffer | undefined,
  body: object,
  flagged?: string,
): { chunks: Buffer[]; asReceived: boolean } {
  const asReceived = raw !== undefined && raw.indexOf(LF) < 0 && raw.indexOf(CR) < 0;
  return {
    chunks: ingestLineChunks(projectId, asReceived ? raw : Buffer.from(JSON.stringify(body)), flagged),
    asReceived,
  };
}

/**
 * Writes one request body through the group commit. Should the engine refuse the bytes as
 * received (JSON that JavaScript reads but ClickHouse does not read as the stored types: a key
 * given twice, an integer spelled 1.0 or 1e3), the body is written once more as this process
 * serialises it; a store that is down is not sent the body a second time.
 */
async function writeBody(
  writer: InsertBatcher,
  projectId: string,
  raw: Buffer | undefined,
  body: object,
  rows: number,
): Promise<void> {
  const line = bodyLine(projectId, raw, body);
  try {
    await writer.add(line.chunks, rows);
  } catch (err) {
    if (!line.asReceived || !(err instanceof RowsRefusedError)) throw err;
    await writer.add(bodyLine(projectId, undefined, body).chunks, rows);
  }
}

/**
 * The spool's loader: its records (ingest lines) go into one group-commit insert; a record the
 * engine refuses as received is serialised by this process and tried once more; refused again,
 * it is handed back to be set aside. A store that is down rejects the whole load: the spool
 * keeps the segments and tries again (rows of a half that committed meanwhile are written
 * again, which the ReplacingMergeTree keys collapse).
 */
function spoolSink(writer: InsertBatcher): SpoolSink {
  return async (loaded, load) => {
    // A line with no rows (a network-error flag kept while Postgres is away: flagOnlyLine) writes
    // nothing, so the engine is not asked: an insert costs its fixed ~15 ms even when empty.
    const records = loaded.filter((r) => r.rows > 0);
    if (records.length === 0) return { refused: [] };
    const insert = { background: load.caughtUp };
    const first = await addRefusable(
      writer,
      records,
      (r) => r.chunks,
      (r) => r.rows,
      insert,
    );
    if (first.length === 0) return { refused: [] };
    const again = first.map(({ item }) => {
      try {
        return { record: item, line: [reserialisedLine(payloadOf(item))] };
      } catch {
        return { record: item, line: item.chunks };
      }
    });
    const second = await addRefusable(
      writer,
      again,
      (a) => a.line,
      (a) => a.record.rows,
      insert,
    );
    return { refused: second.map(({ item, error }) => ({ record: item.record, error })) };
  };
}

/**
 * The ClickHouse `ingest` Null table: one group commit for every /ingest/events and
 * /ingest/network body. Its materialized views write `events` and `network_logs` (the requests
 * and the mirrored network events), so one insert carries both routes' bodies and writes one
 * part per table (clickhouse/004_one_ingest_table.sql).
 */
export function ingestRepo(ch: ClickHouse, budget: QueueBudget) {
  const writer = new InsertBatcher(ch, 'ingest', budget, INGEST_BATCH);
  return {
    /**
     * Resolves once the body is committed, in a block shared with concurrent requests.
     * `flagged` (the session a body first shows a network error of) is the caller's to set
     * here; the spool's loader sets it instead (`flagsOnLoad`).
     */
    add: (projectId: string, raw: Buffer | undefined, body: object, rows: number, _flagged?: string) =>
      writeBody(writer, projectId, raw, body, rows),
    flagsOnLoad: false,
    /** Resolves once everything accepted so far is written (shutdown, tests). */
    drain: () => writer.drain(),
    /** The group commit (its queue and inserts are measured); the spool's loader inserts through it too. */
    batcher: writer,
    /** The ingest spool's loader (the spool is a store of its own, built by src/compose.ts). */
    spoolSink: spoolSink(writer),
  };
}

export type IngestRepo = ReturnType<typeof ingestRepo>;

/**
 * With INGEST_SPOOL: a body is durable once fsync'd to the spool, whose loader inserts it later
 * through the repo's `spoolSink`, and then sets the network-error flag the line carries
 * (`flaggingSink`): the flag shows with the events that raised it, and no request waits on
 * Postgres for it.
 */
export function spooledIngest(repo: IngestRepo, spool: Spool): IngestRepo {
  return {
    ...repo,
    add: (projectId, raw, body, rows, flagged) => spool.append(bodyLine(projectId, raw, body, flagged).chunks, rows),
    flagsOnLoad: true,
  };
}

type FlaggedSession = { projectId: string; sessionId: string };

/**
 * The spool's loader, then the flags: the sessions whose network errors the loaded lines carry
 * (those the engine refused excepted) are flagged in one write. Should Postgres not take it, the
 * rows stay stored and the flags wait in the spool (`keep`: appended again as lines of their own,
 * which write no rows), tried by a later load: events keep reaching ClickHouse while Postgres is
 * away. Only when they cannot be kept either does the load fail, to be tried again whole (its
 * rows collapse).
 */
export function flaggingSink(
  sink: SpoolSink,
  o: {
    flag: (sessions: FlaggedSession[]) => Promise<void>;
    keep: (sessions: FlaggedSession[]) => Promise<void>;
    log: Pick<Log, 'warn'>;
  },
): SpoolSink {
  return async (records, load) => {
    const out = await sink(records, load);
    const refused = new Set(out.refused.map((r) => r.record));
    const flagged = new Map<string, FlaggedSession>();
    for (const r of records) {
      const head = r.chunks[0];
      const s = head && !refused.has(r) ? flaggedSessionOf(head) : undefined;
      if (s) flagged.set(`${s.projectId}:${s.sessionId}`, s);
    }
    const sessions = [...flagged.values()];
    if (sessions.length === 0) return out;
    try {
      await o.flag(sessions);
    } catch (err) {
      await o.keep(sessions).catch((keepErr: unknown) => {
        // The load fails on the flag's error; why the flags could not wait either is said here.
        o.log.warn({ err: loggableError(keepErr), sessions: sessions.length }, 'network-error flags could not be kept');
        throw err;
      });
      o.log.warn(
        { err: loggableError(err), sessions: sessions.length },
        'network-error flags not written; kept in the spool for a later load',
      );
    }
    return out;
  };
}

/** A line that carries a session's flag and no rows (`flaggingSink`'s `keep`). */
export const flagOnlyLine = (s: FlaggedSession): Buffer[] => ingestLineChunks(s.projectId, EMPTY_BODY, s.sessionId);
const EMPTY_BODY = Buffer.from('{}');
