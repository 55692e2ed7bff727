import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { BadRequestError } from '../errors.ts';

/** Bounds on a form: the one-click unsubscribe POST carries one or two short fields. */
const LIMITS = { fields: 20, fieldNameSize: 100, fieldSize: 2048, files: 0, parts: 20, headerPairs: 20 };

/**
 * The plain fields of a small multipart/form-data body, through a streaming parser whose work is
 * linear in the body. Files, too many or too long fields and broken framing are refused.
 */
export function parseFormFields(body: Buffer, contentType: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string) =>
      reject(new BadRequestError('malformed_request', `The multipart/form-data body ${reason}.`));
    let parser: BusboyInstance;
    try {
      parser = new Busboy({ headers: { 'content-type': contentType }, limits: LIMITS });
    } catch (error) {
      return fail(`cannot be read (${(error as Error).message})`);
    }
    const fields: Record<string, string> = Object.create(null);
    let refused: string | undefined;
    parser
      .on('field', (name, value, nameTruncated, valueTruncated) => {
        if (nameTruncated || valueTruncated) refused ??= `has a field longer than ${LIMITS.fieldSize} bytes`;
        else fields[name] = value;
      })
      .on('file', (_name, stream) => {
        refused ??= 'holds a file; only plain fields are accepted';
        stream.resume();
      })
      .on('filesLimit', () => {
        refused ??= 'holds a file; only plain fields are accepted';
      })
      .on('fieldsLimit', () => {
        refused ??= `has more than ${LIMITS.fields} fields`;
      })
      .on('partsLimit', () => {
        refused ??= `has more than ${LIMITS.parts} parts`;
      })
      .on('error', (error: Error) => fail(`cannot be read (${error.message})`))
      .on('finish', () => (refused ? fail(refused) : resolve({ ...fields })));
    parser.end(body);
  });
}
