import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { UUID_PATTERN } from '../domain/ids.ts';

// ajv-formats ships CommonJS; its default export is the plugin function.
const addFormatsPlugin = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** ajv-formats' formats, with `uuid` as the stores read it (src/domain/ids.ts, `UUID_PATTERN`). */
const addFormats = (ajv: Ajv): Ajv => addFormatsPlugin(ajv).addFormat('uuid', UUID_PATTERN);

/**
 * The ajv that validates request bodies: strict (no type coercion: "12" is not a number).
 * A function, so the SDK's contract test compiles the route schemas exactly as the server does.
 */
export function bodyAjv(): Ajv {
  return addFormats(
    new Ajv({ allErrors: true, coerceTypes: false, useDefaults: false, removeAdditional: false, strict: false }),
  );
}

/**
 * Bodies are validated strictly, query strings with coercion (they are all strings on the
 * wire). Each schema is compiled once, at start-up.
 */
export function registerValidation(app: FastifyInstance): void {
  const body = bodyAjv();
  const query = addFormats(
    new Ajv({ allErrors: false, coerceTypes: true, useDefaults: true, removeAdditional: false, strict: false }),
  );
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : query).compile(schema));
}

/** preValidation: a POST whose body is optional (sent without one) is validated as `{}`. */
export async function optionalBody(req: { body: unknown }): Promise<void> {
  req.body ??= {};
}
