import type { FastifyInstance } from 'fastify';
import { BadRequestError } from '../errors.ts';

/** The deepest nesting of arrays and objects a JSON body may have (docs/api-conventions.md). */
const MAX_JSON_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The nesting depth of JSON text, counted in one pass; brackets inside strings do not count. */
function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * application/json bodies: valid UTF-8 only (no silent U+FFFD), nesting capped before any code
 * walks the value, then fastify's own parser (which also refuses prototype poisoning).
 */
export function jsonBodyParser(app: FastifyInstance) {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      return done(new BadRequestError('malformed_request', 'The request body is not valid UTF-8.'));
    }
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
      return done(
        new BadRequestError(
          'malformed_request',
          `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
        ),
      );
    parse(request, text, done);
  });
}
