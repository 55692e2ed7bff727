import type { Queryable } from '../../src/db/db.ts';
import type { LinkKind } from './projection.ts';

export interface LinkRow {
  podcast_id: string;
  kind: LinkKind;
  key: string;
  label: string | null;
  episode_count: number;
}

/**
 * Every link of the given shows (all kinds unless `kinds` narrows them), labelled when its kind is
 * in `labelled` (every kind by default).
 */
export async function linksOfPodcasts(
  db: Queryable,
  podcastIds: readonly string[],
  kinds?: readonly LinkKind[],
  labelled: readonly LinkKind[] | 'all' = 'all',
): Promise<LinkRow[]> {
  if (podcastIds.length === 0) return [];
  const { rows } = await db.query<LinkRow>(
    `select podcast_id, kind, key, case when $3::text[] is null or kind = any($3::text[]) then label end as label,
            episode_count
       from podcast_links
      where podcast_id = any($1::text[]) and ($2::text[] is null or kind = any($2::text[]))`,
    [podcastIds, kinds ?? null, labelled === 'all' ? null : labelled],
  );
  return rows;
}

/**
 * The `limit` shows with the highest first-pass score for a show: for each (kind, key) it holds,
 * the `perKey` other shows holding it with most episodes (each adding that key's `part`), and its
 * `perKey` most popular publisher mates (each adding `matePart`). Parts are summed in the order
 * given, mates first, so the sums are the same doubles whoever adds them. Ties go to the smaller id
 * as JavaScript compares strings (UTF-16 code units: the order answers list shows in), which no
 * PostgreSQL collation gives, so the query ranks the sums and the shows tied at the cut are ordered here.
 */
export async function firstPassCandidates(
  db: Queryable,
  podcastId: string,
  keys: readonly { kind: LinkKind; key: string; part: number }[],
  matePart: number,
  perKey: number,
  limit: number,
): Promise<string[]> {
  const { rows } = await db.query<{ podcast_id: string; rank: number }>(
    `with shared as (
       select l.podcast_id, t.part, t.n
         from unnest($2::text[], $3::text[], $4::float8[]) with ordinality as t(kind, key, part, n)
         cross join lateral (
           select x.podcast_id from podcast_links x
            where x.kind = t.kind and x.key = t.key and x.podcast_id <> $1::text
            order by x.episode_count desc, x.podcast_id limit $6::int) l
     ),
     mates as (
       select p.id as podcast_id, $5::float8 as part, 0::bigint as n
         from podcasts me join podcasts p on p.publisher->>'id' = me.publisher->>'id' and p.id <> me.id
        where me.id = $1::text order by p.popularity desc nulls last, p.id limit $6::int
     )
     select podcast_id, (dense_rank() over (order by sum(part order by n) desc))::int as rank
       from (select * from mates union all select * from shared) c
      group by podcast_id
      order by rank fetch first ($7::int) rows with ties`,
    [
      podcastId,
      keys.map((k) => k.kind),
      keys.map((k) => k.key),
      keys.map((k) => k.part),
      matePart,
      perKey,
      limit,
    ],
  );
  return rows
    .sort((a, b) => a.rank - b.rank || (a.podcast_id < b.podcast_id ? -1 : 1))
    .slice(0, limit)
    .map((r) => r.podcast_id);
}

export async function publishersOf(db: Queryable, podcastIds: readonly string[]) {
  const { rows } = await db.query<{ id: string; publisher_id: string | null; popularity: number | null }>(
    `select id, publisher->>'id' as publisher_id, popularity from podcasts where id = any($1::text[])`,
    [podcastIds],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

export interface EpisodeLinkRow {
  episode_id: string;
  podcast_id: string;
  kind: LinkKind;
  key: string;
  label: string | null;
}

export async function linksOfEpisodes(
  db: Queryable,
  episodeIds: readonly string[],
  kinds?: readonly LinkKind[],
) {
  if (episodeIds.length === 0) return [];
  const { rows } = await db.query<EpisodeLinkRow>(
    `select episode_id, podcast_id, kind, key, label from podcast_link_episodes
      where episode_id = any($1::text[]) and ($2::text[] is null or kind = any($2::text[]))`,
    [episodeIds, kinds ?? null],
  );
  return rows;
}

/** For each (kind, key), the most recent other episodes holding it, at most `perKey`. */
export async function episodesSharing(
  db: Queryable,
  episodeId: string,
  keys: readonly { kind: LinkKind; key: string }[],
  perKey: number,
): Promise<EpisodeLinkRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<EpisodeLinkRow>(
    `select l.episode_id, l.podcast_id, t.kind, t.key, l.label
       from unnest($1::text[], $2::text[]) as t(kind, key)
       cross join lateral (
         select x.episode_id, x.podcast_id, x.label from podcast_link_episodes x
          where x.kind = t.kind and x.key = t.key and x.episode_id <> $3::text
          order by x.published_at desc, x.episode_id limit $4::int) l`,
    [keys.map((k) => k.kind), keys.map((k) => k.key), episodeId, perKey],
  );
  return rows;
}

/** The shows a guest appeared on, most appearances first. */
export async function showsOfGuest(db: Queryable, personIds: readonly string[], limit: number) {
  const { rows } = await db.query<{ podcast_id: string; episode_count: number }>(
    `select podcast_id, sum(episode_count)::int as episode_count from podcast_links
      where kind = 'guest' and key = any($1::text[])
      group by podcast_id order by episode_count desc, podcast_id limit $2::int`,
    [personIds, limit],
  );
  return rows;
}
