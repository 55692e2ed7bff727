import type { EpisodeScope, KeywordFilter } from '../../projections/search-passages/queries.ts';
import { assertRange, instantOf } from '../catalog/params.ts';
import type { Queryable } from '../db/db.ts';
import type { ActiveFilter } from './diagnostics.ts';
import { parseKeywords } from './keywords.ts';
import {
  type EntityParameter,
  entityTypeOf,
  MENTION_ENTITY_PARAMETERS,
  type ResolvedEntity,
  resolveEntity,
  resolveEpisode,
  resolvePodcast,
  roleOf,
  SEARCH_ENTITY_PARAMETERS,
} from './references.ts';

/** The filter parameters shared by search, mentions and their timeseries (docs/search.md). */
export interface FilterQuery extends Partial<Record<EntityParameter, string>> {
  keyword_search?: string;
  keyword_match?: 'all' | 'ranked';
  semantic_search?: string;
  entity_type?: string;
  role?: string;
  podcast_id?: string;
  episode_id?: string;
  language?: string;
  since?: string;
  until?: string;
}

export interface Filters {
  scope: EpisodeScope;
  keywords: KeywordFilter | undefined;
  entity: ResolvedEntity | undefined;
}

/**
 * Validates and resolves the filters of episode search or of mentions (docs/search.md): their entity
 * parameters differ (mentions also take company_id), and an entity's episodes are, for search,
 * those that mention it or where it speaks; for mentions, only those that mention it.
 */
export async function resolveFilters(
  db: Queryable,
  q: FilterQuery,
  surface: 'search' | 'mentions',
): Promise<Filters> {
  const speaking = surface === 'search';
  const since = instantOf(q.since);
  const until = instantOf(q.until);
  assertRange(since, until, 'since', 'until');
  const keywords =
    q.keyword_search === undefined
      ? undefined
      : { terms: parseKeywords(q.keyword_search), all: q.keyword_match !== 'ranked' };
  // The references are resolved at once; their errors come in this order all the same.
  const [resolved, podcast, episode] = await Promise.allSettled([
    resolveEntity(db, q, speaking ? SEARCH_ENTITY_PARAMETERS : MENTION_ENTITY_PARAMETERS),
    resolvePodcast(db, q.podcast_id),
    resolveEpisode(db, q.episode_id),
  ]);
  const entity = settled(resolved);
  const role = roleOf(q.role, entity);
  const entityType = entityTypeOf(q.entity_type);
  const podcastId = settled(podcast);
  const episodeId = settled(episode);
  const scope: EpisodeScope = {
    ...(podcastId ? { podcastId } : {}),
    ...(episodeId ? { episodeId } : {}),
    ...(q.language ? { language: q.language } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(entity ? { entity: { id: entity.entity.id, names: entity.names, speaking } } : {}),
    ...(entityType ? { entityType } : {}),
    ...(role ? { role } : {}),
  };
  return { scope, keywords, entity };
}

function settled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

type Probe = (scope: EpisodeScope, keywords: KeywordFilter | undefined) => Promise<boolean>;

/** The filters in effect, in the order diagnostics try relaxing them. */
export function activeFilters(f: Filters, q: FilterQuery, probe: Probe): ActiveFilter[] {
  const { scope, keywords } = f;
  // keywords: null drops the keyword filter; omitted keeps it as it is.
  const without =
    (keys: (keyof EpisodeScope)[], k: KeywordFilter | null | undefined = keywords) =>
    () => {
      const next: EpisodeScope = { ...scope };
      for (const key of keys) delete next[key];
      return probe(next, k ?? undefined);
    };
  const filters: ActiveFilter[] = [];
  if (scope.episodeId !== undefined)
    filters.push({
      filter: 'episode_id',
      why: 'The episode does not match the other filters.',
      retryWith: { episode_id: null },
      matchesWithout: without(['episodeId']),
    });
  if (scope.podcastId !== undefined)
    filters.push({
      filter: 'podcast_id',
      why: 'No episode of this podcast matches the other filters.',
      retryWith: { podcast_id: null },
      matchesWithout: without(['podcastId']),
    });
  if (scope.language !== undefined)
    filters.push({
      filter: 'language',
      why: `No episode in language ${JSON.stringify(scope.language)} matches the other filters.`,
      retryWith: { language: null },
      matchesWithout: without(['language']),
    });
  if (scope.since !== undefined || scope.until !== undefined) {
    const range = Object.fromEntries(
      (['since', 'until'] as const).filter((p) => q[p] !== undefined).map((p) => [p, null]),
    );
    filters.push({
      filter: scope.since !== undefined ? 'since' : 'until',
      why: 'No episode published in this range matches the other filters.',
      retryWith: range,
      matchesWithout: without(['since', 'until']),
    });
  }
  if (scope.role !== undefined)
    filters.push({
      filter: 'role',
      why: `The entity does not speak as ${scope.role} in any episode that matches the other filters.`,
      retryWith: { role: null },
      matchesWithout: without(['role']),
    });
  if (scope.entityType !== undefined)
    filters.push({
      filter: 'entity_type',
      why: `No episode that matches the other filters involves an entity of type ${scope.entityType}.`,
      retryWith: { entity_type: null },
      matchesWithout: without(['entityType']),
    });
  if (f.entity !== undefined)
    filters.push({
      filter: f.entity.parameter,
      why: `No episode that matches the other filters mentions ${f.entity.entity.name}.`,
      retryWith: { [f.entity.parameter]: null, ...(scope.role ? { role: null } : {}) },
      matchesWithout: without(['entity', 'role']),
    });
  if (keywords?.all && keywords.terms.length > 1)
    filters.push({
      filter: 'keyword_search',
      why: 'No passage of at most 5 lines holds every term; ranked matching accepts any of them.',
      retryWith: { keyword_match: 'ranked' },
      matchesWithout: without([], { ...keywords, all: false }),
    });
  else if (keywords)
    filters.push({
      filter: 'keyword_search',
      why: 'No transcript line that matches the other filters holds these words.',
      retryWith: { keyword_search: null },
      matchesWithout: without([], null),
    });
  return filters;
}
