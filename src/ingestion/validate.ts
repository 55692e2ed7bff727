import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { DATE_TIME_RULE, isCallerDateTime, utcInstant } from '../date-time.ts';
import type { ErrorDetail } from '../errors.ts';
import { normaliseSpeakerRole } from '../matching/engine/roles.ts';
import { unstorableText } from '../storable-text.ts';
import { ajvErrorDetail } from '../validation-errors.ts';
import type { IngestEvent } from './events.ts';
import { rankingRules } from './ranking-captured.ts';

const schemaFile = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../schemas/events/${name}.json`, import.meta.url), 'utf8')) as object;

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
ajv.addFormat('date-time', isCallerDateTime);
// maxLength counts characters; an index row counts UTF-8 bytes. Where several strings share one
// index row, each also has a byte cap so that together they fit (docs/ingestion.md, Limits).
ajv.addKeyword({
  keyword: 'maxBytes',
  type: 'string',
  schemaType: 'number',
  error: { message: ({ schema }) => `must NOT have more than ${schema} bytes of UTF-8` },
  validate: (max: number, data: string) => Buffer.byteLength(data, 'utf8') <= max,
});
const validators: Record<IngestEvent['type'], ValidateFunction> = {
  'entity.upserted': ajv.compile(schemaFile('entity.upserted')),
  'episode.transcribed': ajv.compile(schemaFile('episode.transcribed')),
  'podcast.upserted': ajv.compile(schemaFile('podcast.upserted')),
  'ranking.captured': ajv.compile(schemaFile('ranking.captured')),
};

export const EVENT_TYPES = Object.keys(validators) as IngestEvent['type'][];

/** How far ahead of the server clock an occurred_at may be (clock skew between producer and server). */
export const MAX_CLOCK_SKEW_MS = 86_400_000;

/** occurred_at orders versions (newest wins): one far in the future would win forever. */
function occurredAtRule(prefix: string, occurredAt: string, now: Date): ErrorDetail[] {
  const instant = utcInstant(occurredAt);
  return instant !== undefined && instant > now.getTime() + MAX_CLOCK_SKEW_MS
    ? [
        {
          location: `${prefix}/occurred_at`,
          message: 'is more than one day ahead of the server clock',
          value: occurredAt,
        },
      ]
    : [];
}

/**
 * Each id of `list` once: a read model keys these rows by id, so a repeated one would silently keep
 * only the last.
 */
function uniqueIds(prefix: string, name: string, list: readonly { id: string }[] | undefined): ErrorDetail[] {
  const seen = new Set<string>();
  const errors: ErrorDetail[] = [];
  list?.forEach((item, i) => {
    if (seen.has(item.id))
      errors.push({
        location: `${prefix}/${name}/${i}/id`,
        message: 'repeats an earlier id',
        value: item.id,
      });
    seen.add(item.id);
  });
  return errors;
}

/**
 * Rules JSON Schema cannot say: the closed role set, unique line numbers and ids, times in order,
 * mentions of lines the transcript has.
 */
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
  event.mentions?.forEach((mention, i) => {
    mention.lines?.forEach((number, j) => {
      if (!seen.has(number))
        errors.push({
          location: `${prefix}/mentions/${i}/lines/${j}`,
          message: 'is not a line of the transcript',
          value: number,
        });
    });
  });
  errors.push(
    ...uniqueIds(prefix, 'segments', event.segments),
    ...uniqueIds(prefix, 'clips', event.clips),
    ...uniqueIds(prefix, 'ads', event.ads),
  );
  return errors;
}

/**
 * Validates one producer event against its JSON Schema (schemas/events/) and the rules beside it.
 * `prefix` is the event's JSON pointer in its batch, e.g. /events/3; `now` is the server clock.
 */
export function validateEvent(event: unknown, prefix = '', now: Date = new Date()): ErrorDetail[] {
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
    return (validate.errors ?? []).map((error) => {
      const detail = ajvErrorDetail(error, event, (pointer) => prefix + pointer);
      return error.keyword === 'format' && error.params.format === 'date-time'
        ? { ...detail, message: DATE_TIME_RULE }
        : detail;
    });
  const unstorable = unstorableText(event, prefix);
  if (unstorable.length) return unstorable;
  const valid = event as IngestEvent;
  return [
    ...occurredAtRule(prefix, valid.occurred_at, now),
    ...(valid.type === 'episode.transcribed' ? episodeRules(prefix, valid) : []),
    ...(valid.type === 'ranking.captured' ? rankingRules(prefix, valid) : []),
  ];
}
