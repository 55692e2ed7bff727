import { Ajv, type AnySchema, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { isCallerDate, isCallerDateTime } from '../date-time.ts';

/**
 * Two validators: bodies are JSON and are checked as sent (no coercion, so `5` is not a string),
 * while query strings, paths and headers arrive as text and are coerced to their declared types.
 * Every error is reported, not just the first: bodies are size-limited and schemas bounded.
 */
export function makeAjv(options: Options, shared: Record<string, AnySchema> = {}) {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    ...options,
  });
  addFormats.default(ajv);
  ajv.addFormat('date-time', isCallerDateTime);
  ajv.addFormat('date', isCallerDate);
  for (const schema of Object.values(shared)) ajv.addSchema(schema);
  return ajv;
}

/**
 * Builds the validator compiler of one fastify context. Used as the schema controller's factory,
 * so plugins that add shared schemas get the same rules, not fastify's coercing default.
 */
export function buildValidator(shared: Record<string, AnySchema> = {}): FastifySchemaCompiler<object> {
  const body = makeAjv({ coerceTypes: false }, shared);
  const text = makeAjv({ coerceTypes: 'array' }, shared);
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema);
}
