import type { FastifyPluginAsync, FastifyTypeProvider, RawServerDefault } from 'fastify';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * Request types come from the same `as const` JSON Schemas that ajv compiles and /openapi.json
 * shows: a route's `req.body`, `req.query` and `req.params` are `FromSchema` of its schema, so a
 * field added to a schema reaches the handler's type without a second declaration. Types only:
 * json-schema-to-ts is a devDependency and nothing of it runs.
 *
 * A property with a `default` comes out required: query strings and params are validated with
 * `useDefaults` (src/http/validation.ts), so ajv fills it in. Bodies are not, so a body schema
 * must not give a default (none does).
 *
 * Replies stay untyped (`serializer: unknown`): the response schemas only filter what is sent
 * and list no required fields, so typing replies from them would check nothing.
 */
export interface SchemaTypes extends FastifyTypeProvider {
  validator: this['schema'] extends JSONSchema ? FromSchema<this['schema']> : unknown;
  serializer: unknown;
}

/** A route plugin whose handlers get their request types from their schemas. */
export type Routes = FastifyPluginAsync<Record<never, never>, RawServerDefault, SchemaTypes>;
