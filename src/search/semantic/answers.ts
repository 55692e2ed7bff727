import { anyEpisode, type Interval } from '../../../projections/search-passages/queries.ts';
import type { Queryable } from '../../db/db.ts';
import { ValidationError } from '../../errors.ts';
import { WINDOW_CONTEXT_LINES } from '../../matching/engine/windows.ts';
import { type Diagnostics, diagnose } from '../diagnostics.ts';
import { activeFilters, type FilterQuery, type Filters } from '../filters.ts';
import { around, searchItem } from '../items.ts';
import { loadEpisodes } from '../parts.ts';
import { bucketsOf, timeseriesOf } from '../timeseries.ts';
import { byRecency, type Semantic, semanticEpisodes, TIMESERIES_PASSAGES } from './semantic.ts';

/** Passages of an item shown as windows (its best ones). */
const PASSAGES_PER_ITEM = 3;
/** The longest range of a semantic timeseries: about two years. */
const MAX_RANGE_DAYS = 731;
const DAY = 86_400_000;

/** One page of semantic or hybrid search items (docs/semantic-search.md, "Search"). */
async function searchItems(
  db: Queryable,
  semantic: Semantic,
  text: string,
  filters: Filters,
  page: { sort: 'relevance' | 'recency'; limit: number; offset: number },
) {
  let ranked = await semanticEpisodes(db, semantic, text, filters.scope, filters.keywords);
  if (page.sort === 'recency') ranked = await byRecency(db, ranked);
  const shown = ranked.slice(page.offset, page.offset + page.limit);
  const linesOf = new Map(
    shown.map((e) => [
      e.episode_id,
      e.passages
        .slice(0, PASSAGES_PER_ITEM)
        .flatMap((p) => Array.from({ length: p.lines }, (_, k) => p.start + k))
        .sort((a, b) => a - b),
    ]),
  );
  const wanted = new Map(
    [...linesOf].map(([id, lines]) => [id, around(lines, WINDOW_CONTEXT_LINES, WINDOW_CONTEXT_LINES)]),
  );
  const parts = await loadEpisodes(db, [...linesOf.keys()], wanted);
  const data = shown.flatMap((e) => {
    const episode = parts.get(e.episode_id);
    // A vector the index still holds for lines a re-sent transcript no longer has: skipped.
    const found = linesOf.get(e.episode_id) ?? [];
    const lines = found.filter((i) => episode?.lines[i] !== undefined);
    if (episode === undefined || lines.length === 0) return [];
    return [
      searchItem(episode, {
        starts: [],
        bestStart: e.passages[0]?.start ?? null,
        score: e.score,
        mentions: { indexes: lines, lost: lines.length < found.length },
        source: e.source,
      }),
    ];
  });
  return { data, hasMore: ranked.length > page.offset + page.limit };
}

/**
 * The search page of a semantic or hybrid query; an empty first page carries diagnostics: the
 * filters relaxed one at a time (docs/search.md), then the similarity floor itself.
 */
export async function semanticPage(
  db: Queryable,
  semantic: Semantic,
  text: string,
  filters: Filters,
  page: {
    query: FilterQuery & { sort: 'relevance' | 'recency'; limit: number };
    offset: number;
    next(offset: number): string;
  },
) {
  const { query, offset } = page;
  const { data, hasMore } = await searchItems(db, semantic, text, filters, {
    sort: query.sort,
    limit: query.limit,
    offset,
  });
  const body: { data: typeof data; has_more: boolean; cursor?: string; diagnostics?: Diagnostics } = {
    data,
    has_more: hasMore,
  };
  if (hasMore) body.cursor = page.next(offset + query.limit);
  if (data.length === 0 && offset === 0) {
    const relaxed = activeFilters(
      filters,
      query,
      async (scope, keywords) => (await semanticEpisodes(db, semantic, text, scope, keywords)).length > 0,
    );
    body.diagnostics = await diagnose([
      ...relaxed,
      {
        filter: 'semantic_search',
        why: 'No passage that matches the other filters is close enough in meaning to semantic_search.',
        retryWith: { semantic_search: null },
        matchesWithout: () => anyEpisode(db, filters.scope, filters.keywords),
      },
    ]);
  }
  return body;
}

/**
 * 422s of a semantic timeseries: `since` is required, the range is at most about two years, and
 * keyword_search cannot be combined with it.
 */
export function assertSemanticTimeseries(
  q: { keyword_search?: string | undefined; since?: string | undefined },
  since: Date | undefined,
  until: Date,
) {
  if (q.keyword_search !== undefined)
    throw new ValidationError(
      'conflicting_parameters',
      'A semantic timeseries cannot be combined with keyword_search.',
      [
        {
          location: 'query.keyword_search',
          message: 'not allowed with semantic_search',
          value: q.keyword_search,
        },
      ],
    );
  if (since === undefined)
    throw new ValidationError(
      'since_required',
      'A semantic timeseries needs since (published at or after).',
      [{ location: 'query.since', message: 'required with semantic_search' }],
    );
  if (until.getTime() - since.getTime() > MAX_RANGE_DAYS * DAY)
    throw new ValidationError(
      'range_too_large',
      `A semantic timeseries spans at most ${MAX_RANGE_DAYS} days.`,
      [{ location: 'query.since', message: `more than ${MAX_RANGE_DAYS} days before until`, value: q.since }],
    );
}

/** Episodes and passages close in meaning per bucket over [since, until). */
export async function semanticTimeseries(
  db: Queryable,
  semantic: Semantic,
  text: string,
  filters: Filters,
  range: { since: Date; until: Date; interval: Interval },
) {
  const buckets = bucketsOf(range.since, range.until, range.interval);
  const scope = { ...filters.scope, since: range.since, until: range.until };
  const found = await semanticEpisodes(db, semantic, text, scope, undefined, TIMESERIES_PASSAGES);
  const counts = buckets.map((bucket) => ({ bucket, episodes: 0, mentions: 0 }));
  for (const e of found) {
    const at = e.published_at?.getTime() ?? 0;
    // The last bucket starting at or before the publication (binary search).
    let lo = 0;
    let hi = buckets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (buckets[mid]!.getTime() <= at) lo = mid;
      else hi = mid - 1;
    }
    const i = lo;
    counts[i]!.episodes++;
    counts[i]!.mentions += e.passages.length;
  }
  return timeseriesOf(range.interval, buckets, counts);
}
