import type { Queryable } from '../../src/db/db.ts';
import type { AlertMatchedEventData } from '../../src/matching/streams.ts';

/** A listed match: its event data without windows and episode block, plus the summary. */
export interface ListedMatch {
  data: Omit<AlertMatchedEventData, 'windows' | 'episode'>;
  llmSummary: string | null;
}

export interface MatchListFilters {
  /** ISO 639-1 codes; the episode language's primary subtag must be one of them. */
  languages?: readonly string[];
  /** Only on_target matches. */
  relevantOnly?: boolean;
  /** The podcast popularity must reach this. */
  minimumPopularity?: number;
  /** At least one of the match's roles must be one of these. */
  roles?: readonly string[];
}

export interface MatchPosition {
  detectedAt: string;
  id: string;
}

/** An alert's matches, newest detected first, `limit` of them after `after`. */
export async function listAlertMatches(
  db: Queryable,
  alertId: string,
  options: { filters: MatchListFilters; limit: number; after?: MatchPosition },
): Promise<ListedMatch[]> {
  const { filters } = options;
  const { rows } = await db.query<{ data: ListedMatch['data']; llm_summary: string | null }>(
    `select data - 'windows' - 'episode' as data, llm_summary from matches
      where alert_id = $1::text
        and ($2::text[] is null or language = any ($2::text[]))
        and (not $3::boolean or relevance = 'on_target')
        and ($4::float8 is null or podcast_popularity >= $4::float8)
        and ($5::text[] is null or roles && $5::text[])
        and ($6::timestamptz is null or (detected_at, id) < ($6::timestamptz, $7::text))
      order by detected_at desc, id desc
      limit $8::int`,
    [
      alertId,
      filters.languages?.length ? filters.languages.map((language) => language.toLowerCase()) : null,
      filters.relevantOnly ?? false,
      filters.minimumPopularity ?? null,
      filters.roles?.length ? filters.roles : null,
      options.after?.detectedAt ?? null,
      options.after?.id ?? null,
      options.limit,
    ],
  );
  return rows.map((row) => ({ data: row.data, llmSummary: row.llm_summary }));
}
