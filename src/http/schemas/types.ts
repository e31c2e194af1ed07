// The request types of the contract, derived from the `as const` schemas next to this file (the
// same objects ajv compiles and /openapi.json shows), and the compile-time proof that each one
// gives the services what their domain types ask for. The domain keeps its own types, since
// domain/ imports nothing from http/ (README, Architecture); a schema that stops guaranteeing a
// field the domain relies on (a required field made optional, an enum widened) fails `tsc`.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type * as I from './ingest.ts';
import type * as E from './export.ts';
import type { Device, SessionStart } from '../../domain/session.ts';
import type { IngestEvent, NetworkRequest } from '../../domain/eventRows.ts';
import type { CrashPayload } from '../../domain/crashGrouping.ts';
import type { ExportQuery } from '../../domain/exportParams.ts';

export type SessionStartBody = FromSchema<typeof I.sessionStartBody>;
export type SessionEndBody = FromSchema<typeof I.sessionEndBody>;
export type EventsBody = FromSchema<typeof I.eventsBody>;
export type IngestEventBody = EventsBody['events'][number];
export type CrashBody = FromSchema<typeof I.crashBody>;
export type NetworkBody = FromSchema<typeof I.networkBody>;
export type NetworkRequestBody = NetworkBody['requests'][number];

/** The query schemas of the /export routes, which share one handler. */
export type ExportQuerySchema =
  | typeof E.sessionsQuery
  | typeof E.crashesQuery
  | typeof E.eventsQuery
  | typeof E.networkQuery
  | typeof E.releasesQuery
  | typeof E.crashOccurrencesQuery;

/** FromSchema of each member of a union of schemas. */
type EachFromSchema<S> = S extends JSONSchema ? FromSchema<S> : never;
/** The query of any /export route, as its schema validates it (defaults applied). */
export type ExportQueryIn = EachFromSchema<ExportQuerySchema>;

/** Compiles only when what the schema lets through is assignable to the domain type. */
type Satisfies<FromTheSchema extends Domain, Domain> = FromTheSchema;

export type SchemaSatisfiesDomain = [
  Satisfies<SessionStartBody, SessionStart>,
  Satisfies<SessionStartBody['device'], Device>,
  Satisfies<IngestEventBody, IngestEvent>,
  Satisfies<NetworkRequestBody, NetworkRequest>,
  Satisfies<CrashBody, CrashPayload>,
  Satisfies<ExportQueryIn, ExportQuery>,
];
