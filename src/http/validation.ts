import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Two validators: bodies are JSON and are checked as sent (no coercion, so `5` is not a string),
 * while query strings, paths and headers arrive as text and are coerced to their declared types.
 * Every error is reported, not just the first: bodies are size-limited and schemas bounded.
 */
function makeAjv(options: Options) {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    ...options,
  });
  addFormats.default(ajv);
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<object> {
  const body = makeAjv({ coerceTypes: false });
  const text = makeAjv({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema);
}
