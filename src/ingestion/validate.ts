import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { ErrorDetail } from '../errors.ts';
import { normaliseSpeakerRole } from '../matching/roles.ts';
import { unstorableText } from '../storable-text.ts';
import { ajvErrorDetail } from '../validation-errors.ts';
import type { IngestEvent } from './events.ts';

const schemaFile = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../schemas/events/${name}.json`, import.meta.url), 'utf8')) as object;

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
// RFC 3339, narrowed to what PostgreSQL's timestamptz takes: year 1 or later, offsets within ±15:59.
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):([0-5]\d))$/;
ajv.addFormat('date-time', (value: string) => {
  const match = RFC3339.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second, offset] = match.slice(1, 8).map((part) => Number(part ?? 0));
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  return (
    year! >= 1 &&
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysInMonth &&
    hour! <= 23 &&
    minute! <= 59 &&
    second! <= 60 &&
    offset! <= 15
  );
});
const validators: Record<IngestEvent['type'], ValidateFunction> = {
  'entity.upserted': ajv.compile(schemaFile('entity.upserted')),
  'episode.transcribed': ajv.compile(schemaFile('episode.transcribed')),
  'podcast.upserted': ajv.compile(schemaFile('podcast.upserted')),
};

export const EVENT_TYPES = Object.keys(validators) as IngestEvent['type'][];

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
  // Own keys only: 'toString' or '__proto__' must not find Object.prototype's members.
  const validate =
    typeof type === 'string' && Object.hasOwn(validators, type)
      ? validators[type as IngestEvent['type']]
      : undefined;
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
