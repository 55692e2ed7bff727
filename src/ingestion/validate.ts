import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { ErrorDetail } from '../errors.ts';
import { normaliseSpeakerRole } from '../matching/roles.ts';
import { ajvErrorDetail } from '../validation-errors.ts';
import type { IngestEvent } from './events.ts';

const schemaFile = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../schemas/events/${name}.json`, import.meta.url), 'utf8')) as object;

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
const validators: Record<IngestEvent['type'], ValidateFunction> = {
  'entity.upserted': ajv.compile(schemaFile('entity.upserted')),
  'episode.transcribed': ajv.compile(schemaFile('episode.transcribed')),
};

export const EVENT_TYPES = Object.keys(validators) as IngestEvent['type'][];

/**
 * Pointers to every string (value or key) holding U+0000 or a lone UTF-16 surrogate: JSON allows
 * both, PostgreSQL cannot store either as text, and a read model would stop at the event.
 */
function unstorableText(node: unknown, pointer: string, found: ErrorDetail[] = []): ErrorDetail[] {
  const check = (text: string, at: string) => {
    if (text.includes('\u0000'))
      found.push({ location: at, message: 'contains a NUL character (U+0000), which cannot be stored' });
    else if (!text.isWellFormed())
      found.push({ location: at, message: 'contains a lone UTF-16 surrogate, which is not text' });
  };
  if (typeof node === 'string') {
    check(node, pointer);
  } else if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) unstorableText(item, `${pointer}/${i}`, found);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      check(key, at);
      unstorableText(value, at, found);
    }
  }
  return found;
}

/** Rules JSON Schema cannot say: the closed role set, unique line numbers, times in order. */
function episodeRules(
  prefix: string,
  event: Extract<IngestEvent, { type: 'episode.transcribed' }>,
): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  event.speakers?.forEach((speaker, i) => {
    if (speaker.role !== undefined && !normaliseSpeakerRole(speaker.role))
      errors.push({
        location: `${prefix}/speakers/${i}/role`,
        message: 'is not a speaker role',
        value: speaker.role,
      });
  });
  const seen = new Set<number>();
  event.transcript?.lines?.forEach((line, i) => {
    if (seen.has(line.number))
      errors.push({
        location: `${prefix}/transcript/lines/${i}/number`,
        message: 'repeats an earlier line number',
        value: line.number,
      });
    seen.add(line.number);
    if (line.end_seconds < line.start_seconds)
      errors.push({
        location: `${prefix}/transcript/lines/${i}/end_seconds`,
        message: 'is before start_seconds',
        value: line.end_seconds,
      });
    if (line.role !== undefined && !normaliseSpeakerRole(line.role))
      errors.push({
        location: `${prefix}/transcript/lines/${i}/role`,
        message: 'is not a speaker role',
        value: line.role,
      });
  });
  return errors;
}

/**
 * Validates one producer event against its JSON Schema (schemas/events/) and the rules beside it.
 * `prefix` is the event's JSON pointer in its batch, e.g. /events/3.
 */
export function validateEvent(event: unknown, prefix = ''): ErrorDetail[] {
  const type = event !== null && typeof event === 'object' ? (event as { type?: unknown }).type : undefined;
  const validate = typeof type === 'string' ? validators[type as IngestEvent['type']] : undefined;
  if (!validate) {
    return [
      {
        location: `${prefix}/type`,
        message: `must be one of ${EVENT_TYPES.join(', ')}`,
        ...(type === undefined ? {} : { value: type }),
      },
    ];
  }
  if (!validate(event))
    return (validate.errors ?? []).map((error) =>
      ajvErrorDetail(error, event, (pointer) => prefix + pointer),
    );
  const unstorable = unstorableText(event, prefix);
  if (unstorable.length) return unstorable;
  return type === 'episode.transcribed'
    ? episodeRules(prefix, event as Extract<IngestEvent, { type: 'episode.transcribed' }>)
    : [];
}
