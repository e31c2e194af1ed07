import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats ships CommonJS; its default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Bodies are validated strictly (no type coercion: "12" is not a number), query strings with
 * coercion (they are all strings on the wire). Each schema is compiled once, at start-up.
 */
export function registerValidation(app: FastifyInstance): void {
  const body = addFormats(new Ajv({ allErrors: true, coerceTypes: false, useDefaults: false, removeAdditional: false, strict: false }));
  const query = addFormats(new Ajv({ allErrors: false, coerceTypes: true, useDefaults: true, removeAdditional: false, strict: false }));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : query).compile(schema));
}
