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
 * How many keys of each kind a show's or an episode's profile holds at most, bounding what scoring
 * reads and compares whatever a show or episode carries (docs/advertising.md, "Scores"). A show's
 * are those on most of its episodes, an episode's the first by key; ties go to the smaller key.
 */
export const PROFILE_CAPS: Readonly<Record<LinkKind, number>> = {
  guest: 100,
  sponsor: 100,
  topic: 50,
  category: 50,
};
const ALL_KINDS = Object.keys(PROFILE_CAPS) as LinkKind[];
const capsOf = (kinds: readonly LinkKind[]) => kinds.map((k) => PROFILE_CAPS[k]);

/**
 * The profiles of the given shows (all kinds unless `kinds` narrows them): each kind's first
 * PROFILE_CAPS links by episodes, then key, labelled when its kind is in `labelled` (every kind by
 * default).
 */
export async function linksOfPodcasts(
  db: Queryable,
  podcastIds: readonly string[],
  kinds: readonly LinkKind[] = ALL_KINDS,
  labelled: readonly LinkKind[] | 'all' = 'all',
): Promise<LinkRow[]> {
  if (podcastIds.length === 0) return [];
  const { rows } = await db.query<LinkRow>(
    `select l.podcast_id, k.kind, l.key,
            case when $4::text[] is null or k.kind = any($4::text[]) then l.label end as label, l.episode_count
       from (select distinct id from unnest($1::text[]) id) p
      cross join unnest($2::text[], $3::int[]) as k(kind, cap)
      cross join lateral (
        select x.podcast_id, x.key, x.label, x.episode_count from podcast_links x
         where x.podcast_id = p.id and x.kind = k.kind
         order by x.episode_count desc, x.key limit k.cap) l`,
    [podcastIds, kinds, capsOf(kinds), labelled === 'all' ? null : labelled],
  );
  return rows;
}

/** Which of `keys` (of one kind) the show holds, in its profile or past it. */
export async function keysOfPodcast(
  db: Queryable,
  podcastId: string,
  kind: LinkKind,
  keys: readonly string[],
) {
  if (keys.length === 0) return new Set<string>();
  const { rows } = await db.query<{ key: string }>(
    // One lookup a key: a filter over the show's keys of the kind would read them all.
    `select k.key from unnest($3::text[]) as k(key)
      cross join lateral (
        select from podcast_links x where x.podcast_id = $1::text and x.kind = $2::text and x.key = k.key limit 1) l`,
    [podcastId, kind, keys],
  );
  return new Set(rows.map((r) => r.key));
}

const SCORED_KINDS: LinkKind[] = ['guest', 'sponsor', 'topic'];

/** What each part of a first-pass score is worth (docs/advertising.md, "Scores"). */
export interface FirstPassParts {
  guest: number;
  sponsor: number;
  /** Shared among the show's own topics: each shared topic adds this ÷ the show's topic count. */
  topics: number;
  /** A show of the same publisher. */
  mate: number;
}

/**
 * The `limit` shows with the highest first-pass score for a show, read in one statement from the
 * show's profile (PROFILE_CAPS): for each guest, sponsor and topic of it, the `perKey` other shows
 * holding it with most episodes (each adding that kind's part), and its `perKey` most popular publisher
 * mates (each adding `mate`). A score is the parts added one by one, the mate's first, then the
 * guests', the sponsors', the topics': parts of one kind being equal, it depends only on how many
 * of each a show shares, so it is added up once per such count (a few dozen a show) instead of
 * once per candidate, and no text is sorted. Ties go to the smaller id as JavaScript compares
 * strings (UTF-16 code units: the order answers list shows in), which no PostgreSQL collation
 * gives, so the query ranks the scores and the shows tied at the cut are ordered here.
 */
export async function firstPassCandidates(
  db: Queryable,
  podcastId: string,
  parts: FirstPassParts,
  perKey: number,
  limit: number,
): Promise<string[]> {
  const { rows } = await db.query<{ podcast_id: string; rank: number }>(
    `with own as (
       select k.kind, l.key
         from unnest($8::text[], $9::int[]) as k(kind, cap)
         cross join lateral (
           select x.key from podcast_links x where x.podcast_id = $1::text and x.kind = k.kind
            order by x.episode_count desc, x.key limit k.cap) l
     ),
     shared as (
       select l.podcast_id, o.kind
         from own o
         cross join lateral (
           select x.podcast_id from podcast_links x
            where x.kind = o.kind and x.key = o.key and x.podcast_id <> $1::text
            order by x.episode_count desc, x.podcast_id limit $6::int) l
     ),
     mates as (
       select p.id as podcast_id, 'mate'::text as kind
         from podcasts me join podcasts p on p.publisher->>'id' = me.publisher->>'id' and p.id <> me.id
        where me.id = $1::text order by p.popularity desc nulls last, p.id limit $6::int
     ),
     counted as materialized (
       select podcast_id, bool_or(kind = 'mate') as mate, count(*) filter (where kind = 'guest')::int as g,
              count(*) filter (where kind = 'sponsor')::int as s, count(*) filter (where kind = 'topic')::int as t
         from (select * from mates union all select * from shared) c
        group by podcast_id
     ),
     signatures as materialized (
       select mate, g, s, t, count(*) as shows from counted group by mate, g, s, t
     ),
     scored as materialized (
       select c.mate, c.g, c.s, c.t, c.shows, f.score
         from signatures c
         cross join lateral (
           select sum(part order by i) as score
             from (select 0 as i, $5::float8 as part where c.mate
                   union all select i, $2::float8 from generate_series(1, c.g) i
                   union all select c.g + i, $3::float8 from generate_series(1, c.s) i
                   union all select c.g + c.s + i,
                                    $4::float8 / (select count(*) from own where kind = 'topic')
                               from generate_series(1, c.t) i) p) f
     ),
     ranked as (
       select mate, g, s, t, (dense_rank() over w)::int as rank, sum(shows) over w as shows_to_here
         from scored window w as (order by score desc)
     )
     select c.podcast_id, r.rank
       from counted c join ranked r using (mate, g, s, t)
      where r.rank <= coalesce((select min(rank) from ranked where shows_to_here >= $7::int), 2147483647)`,
    [
      podcastId,
      parts.guest,
      parts.sponsor,
      parts.topics,
      parts.mate,
      perKey,
      limit,
      SCORED_KINDS,
      capsOf(SCORED_KINDS),
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

/**
 * The episodes' profiles (of `kinds`, else all): each kind's first PROFILE_CAPS links by key, with
 * their labels unless `labelled` is false.
 */
export async function linksOfEpisodes(
  db: Queryable,
  episodeIds: readonly string[],
  kinds: readonly LinkKind[] = ALL_KINDS,
  labelled = true,
) {
  if (episodeIds.length === 0) return [];
  const { rows } = await db.query<EpisodeLinkRow>(
    `select l.episode_id, l.podcast_id, k.kind, l.key, case when $4::boolean then l.label end as label
       from (select distinct id from unnest($1::text[]) id) e
      cross join unnest($2::text[], $3::int[]) as k(kind, cap)
      cross join lateral (
        select x.episode_id, x.podcast_id, x.key, x.label from podcast_link_episodes x
         where x.episode_id = e.id and x.kind = k.kind
         order by x.key limit k.cap) l`,
    [episodeIds, kinds, capsOf(kinds), labelled],
  );
  return rows;
}

/**
 * The other episodes among the `perKey` most recent holding each (kind, key), once each: read from
 * the index alone, since an episode holding all of a wide episode's keys would otherwise come back
 * once a key, with its label.
 */
export async function episodesSharing(
  db: Queryable,
  episodeId: string,
  keys: readonly { kind: LinkKind; key: string }[],
  perKey: number,
): Promise<string[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ episode_id: string }>(
    `select distinct l.episode_id
       from unnest($1::text[], $2::text[]) as t(kind, key)
       cross join lateral (
         select x.episode_id from podcast_link_episodes x
          where x.kind = t.kind and x.key = t.key and x.episode_id <> $3::text
          order by x.published_at desc, x.episode_id limit $4::int) l`,
    [keys.map((k) => k.kind), keys.map((k) => k.key), episodeId, perKey],
  );
  return rows.map((r) => r.episode_id);
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
