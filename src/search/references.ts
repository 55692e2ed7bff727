import { findCatalogEpisode } from '../../projections/catalog-episodes/queries.ts';
import { findCompany } from '../../projections/entities/knowledge.ts';
import { type EntityRow, findEntityOfId } from '../../projections/entities/queries.ts';
import { resolvePodcastId } from '../../projections/podcasts/queries.ts';
import { type Term, WORDS_PER_LINE } from '../../projections/search-passages/passages.ts';
import type { Queryable } from '../db/db.ts';
import { UnresolvedReferenceError, ValidationError } from '../errors.ts';
import { normaliseSpeakerRole, SPEAKER_ROLES } from '../matching/engine/roles.ts';
import { foldWords } from '../matching/engine/text-folding.ts';

/** The entity reference parameters of episode search and its timeseries. */
export const SEARCH_ENTITY_PARAMETERS = ['entity_id', 'entity_slug', 'person_slug', 'company_slug'] as const;
/** The entity reference parameters of mentions and their timeseries: search's and a company reference. */
export const MENTION_ENTITY_PARAMETERS = [...SEARCH_ENTITY_PARAMETERS, 'company_id'] as const;
export type EntityParameter = (typeof MENTION_ENTITY_PARAMETERS)[number];
export const ENTITY_TYPES = ['PERSON', 'COMPANY', 'KNOWLEDGE_GRAPH_ENTITY'] as const;

const ENTITY_LOOKUP = {
  message: 'Look the entity up by name, then pass its id as entity_id.',
  method: 'GET',
  endpoint: '/v1/entities/search',
};

const unresolved = (parameter: string, value: string, resolve = ENTITY_LOOKUP) =>
  new UnresolvedReferenceError(parameter, value, resolve);

/**
 * Words of an entity's folded names looked for in the index, over all its names: PostgreSQL parses
 * a query of them in time growing with the square of their number (68,000 words: 1.1 s).
 */
const NAME_WORDS = 4096;

export interface ResolvedEntity {
  parameter: EntityParameter;
  entity: EntityRow;
  /** The folded name and aliases, as the matcher detects them. */
  names: Term[];
}

/** SQL and parameters: the id of the entity the parameter's value names, the newest first. */
function entityIdQuery(
  parameter: Exclude<EntityParameter, 'company_id'>,
  value: string,
): [string, unknown[]] {
  const column = parameter === 'entity_id' ? 'id' : 'slug';
  const type = parameter === 'person_slug' ? 'PERSON' : parameter === 'company_slug' ? 'COMPANY' : null;
  return [
    `select id from entities where ${column} = $1::text and ($2::text is null or entity_type = $2::text)
      order by occurred_at desc limit 1`,
    [value, type],
  ];
}

/**
 * The one entity the query names with one of `parameters`, or undefined; 422 when two are named or
 * the one named is unknown. A company_id is a company reference (findCompany, docs/knowledge-graph.md).
 */
export async function resolveEntity(
  db: Queryable,
  query: Partial<Record<EntityParameter, string>>,
  parameters: readonly EntityParameter[],
): Promise<ResolvedEntity | undefined> {
  const given = parameters.filter((p) => query[p] !== undefined);
  if (given.length === 0) return undefined;
  if (given.length > 1)
    throw new ValidationError('conflicting_parameters', `Name one entity: ${given.join(', ')} were given.`, [
      ...given.map((p) => ({
        location: `query.${p}`,
        message: 'only one entity parameter is allowed',
        value: query[p],
      })),
    ]);
  const parameter = given[0]!;
  const value = query[parameter]!;
  const entity =
    parameter === 'company_id'
      ? await findCompany(db, value)
      : await findEntityOfId(db, ...entityIdQuery(parameter, value));
  if (entity === null) throw unresolved(parameter, value);
  const names = new Map<string, Term>();
  let budget = NAME_WORDS;
  for (const name of [entity.name, ...entity.aliases]) {
    const words = foldWords(name);
    // A name of more words than a line's indexed ones is in no row of the index; past the budget
    // the names are not looked for in the index (docs/search.md, Filters).
    if (words.length === 0 || words.length > WORDS_PER_LINE || words.length > budget) continue;
    const key = words.join(' ');
    if (names.has(key)) continue;
    names.set(key, words);
    budget -= words.length;
  }
  return { parameter, entity, names: [...names.values()] };
}

export async function resolvePodcast(db: Queryable, value: string | undefined) {
  if (value === undefined) return undefined;
  const id = await resolvePodcastId(db, value);
  if (id === null)
    throw unresolved('podcast_id', value, {
      message: 'Find the podcast by title, then pass its id as podcast_id.',
      method: 'GET',
      endpoint: '/v1/podcasts/search',
    });
  return id;
}

export async function resolveEpisode(db: Queryable, value: string | undefined) {
  if (value === undefined) return undefined;
  const episode = await findCatalogEpisode(db, value);
  if (episode === null)
    throw unresolved('episode_id', value, {
      message: "List the podcast's episodes, then pass an episode id as episode_id.",
      method: 'GET',
      endpoint: '/v1/podcasts/episodes',
    });
  return episode.id;
}

/** A role argument in the closed set (case-insensitive, CO_HOST as HOST); it needs an entity. */
export function roleOf(value: string | undefined, entity: ResolvedEntity | undefined) {
  if (value === undefined) return undefined;
  const role = normaliseSpeakerRole(value);
  if (role === undefined)
    throw new ValidationError('invalid_role', `role is one of ${SPEAKER_ROLES.join(', ')}.`, [
      { location: 'query.role', message: 'not a speaker role', value },
    ]);
  if (entity === undefined)
    throw new ValidationError(
      'role_requires_entity',
      'role filters by how an entity takes part: name the entity.',
      [
        {
          location: 'query.role',
          message: 'needs entity_id, entity_slug, person_slug or company_slug',
          value,
        },
      ],
    );
  return role;
}

export function entityTypeOf(value: string | undefined) {
  if (value === undefined) return undefined;
  const type = value.trim().toUpperCase();
  if (!(ENTITY_TYPES as readonly string[]).includes(type))
    throw new ValidationError('invalid_entity_type', `entity_type is one of ${ENTITY_TYPES.join(', ')}.`, [
      { location: 'query.entity_type', message: 'not an entity type', value },
    ]);
  return type;
}
