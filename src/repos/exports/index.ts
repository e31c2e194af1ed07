import type { Queryable } from '../../stores/postgres/port.ts';
import type { ClickHouse } from '../../stores/clickhouse/port.ts';
import { sessionsExport } from './sessions.ts';
import { crashesExport } from './crashes.ts';
import { eventsExport } from './events.ts';
import { networkExport } from './network.ts';

export type { Encoding, ExportResource, DateFilter, Row } from './types.ts';
export type { EventFilter } from './events.ts';

/** The four export resources, reading Postgres (sessions, crash groups) and ClickHouse (events, network logs). */
export function exportsRepo(db: Queryable, ch: ClickHouse) {
  return {
    sessions: sessionsExport(db, ch),
    crashes: crashesExport(db),
    events: eventsExport(ch),
    network: networkExport(ch),
  };
}

export type ExportsRepo = ReturnType<typeof exportsRepo>;
