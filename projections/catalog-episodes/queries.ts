import { exactInstant, likeLiteral, Params } from '../../src/catalog/sql.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { CatalogTopic, EpisodeVideo } from '../../src/ingestion/catalog-events.ts';
import { type PodcastReferenceRow, podcastReferenceOf } from '../podcasts/queries.ts';
import { transcriptVersionOf } from '../transcripts/queries.ts';

export interface EpisodeRow {
  id: string;
  podcast_id: string;
  slug: string | null;
  title: string;
  description: string | null;
  audio_url: string | null;
  image_url: string | null;
  url: string | null;
  language: string | null;
  explicit: boolean | null;
  episode_number: number | null;
  duration_seconds: number;
  published_at: Date;
  has_transcript: boolean;
  entity_count: number;
  clip_count: number;
  segment_count: number;
  speakers: {
    id?: string;
    name?: string;
    role: string;
    entity_id?: string;
    person_id?: string;
    speaking_duration_seconds?: number;
    description?: string;
    descriptor?: string;
  }[];
  topics: CatalogTopic[];
  videos: EpisodeVideo[];
}

export interface EpisodeFilters {
  podcastId?: string;
  /** Episodes that mention any of these entities or have one of them speaking. */
  entityIds?: string[];
  language?: string;
  title?: string;
  publishedAfter?: Date;
  publishedBefore?: Date;
  hasTranscript?: boolean;
  minDuration?: number;
  maxDuration?: number;
}

/** A listed episode with its published_at to the microsecond, the keyset position's `p`. */
export interface ListedEpisode extends EpisodeRow {
  published_position: string;
}

/** Keyset position of a page's last episode: newest first, then id descending. */
export interface EpisodePosition {
  p: string;
  i: string;
}

/**
 * SQL: the language of catalog_episodes row `e` (docs/catalog.md, "An episode's language"): what its
 * event said (the episode's, else the transcript's, else its podcast block's), else the show's
 * language in the podcasts read model, read at query time so that the two projections may run, and
 * be rebuilt, in any order.
 */
export const episodeLanguage = (e: string) =>
  `coalesce(${e}.language, (select lp.language from podcasts lp where lp.id = ${e}.podcast_id))`;

/** SQL: row `e`'s language has this primary subtag, lower case (`en` covers `en-US` and `en_GB`). */
export const episodeLanguageIs = (e: string, code: string) =>
  `lower(split_part(replace(${episodeLanguage(e)}, '_', '-'), '-', 1)) = ${code}`;

const COLUMNS = `id, podcast_id, slug, title, description, audio_url, image_url, url,
  ${episodeLanguage('catalog_episodes')} as language, explicit, episode_number, duration_seconds, published_at,
  has_transcript, entity_count, clip_count, segment_count, speakers, topics, videos`;

export async function listEpisodes(
  db: Queryable,
  f: EpisodeFilters,
  limit: number,
  after?: EpisodePosition,
): Promise<ListedEpisode[]> {
  const params = new Params();
  const where: string[] = [];
  if (f.podcastId !== undefined) where.push(`podcast_id = ${params.p(f.podcastId, 'text')}`);
  if (f.entityIds !== undefined) where.push(`entity_ids && ${params.p(f.entityIds, 'text[]')}`);
  if (f.language !== undefined)
    where.push(episodeLanguageIs('catalog_episodes', params.p(f.language.toLowerCase(), 'text')));
  if (f.title !== undefined) where.push(`title ilike ${params.p(`%${likeLiteral(f.title)}%`, 'text')}`);
  if (f.publishedAfter) where.push(`published_at >= ${params.p(f.publishedAfter, 'timestamptz')}`);
  if (f.publishedBefore) where.push(`published_at < ${params.p(f.publishedBefore, 'timestamptz')}`);
  if (f.hasTranscript !== undefined) where.push(`has_transcript = ${params.p(f.hasTranscript, 'boolean')}`);
  if (f.minDuration !== undefined) where.push(`duration_seconds >= ${params.p(f.minDuration, 'int')}`);
  if (f.maxDuration !== undefined) where.push(`duration_seconds <= ${params.p(f.maxDuration, 'int')}`);
  if (after)
    where.push(`(published_at, id) < (${params.p(after.p, 'timestamptz')}, ${params.p(after.i, 'text')})`);
  const { rows } = await db.query<ListedEpisode>(
    `select ${COLUMNS}, ${exactInstant('published_at')} as published_position from catalog_episodes
      ${where.length ? `where ${where.join(' and ')}` : ''}
      order by published_at desc, id desc limit ${params.p(limit, 'int')}`,
    params.values,
  );
  return rows;
}

/** An episode by id, else by slug (the newest holding it). */
export async function findCatalogEpisode(db: Queryable, ref: string): Promise<EpisodeRow | null> {
  const { rows } = await db.query<EpisodeRow>(
    `select ${COLUMNS} from catalog_episodes where id = $1::text
     union all (select ${COLUMNS} from catalog_episodes where slug = $1::text order by published_at desc, id limit 1)
     limit 1`,
    [ref],
  );
  return rows[0] ?? null;
}

/** An episode with its show's reference and the version of its transcript the transcripts model holds. */
export interface EpisodeDetailRow extends EpisodeRow {
  podcast: PodcastReferenceRow | null;
  transcript_version: string | null;
}

/** findCatalogEpisode with the show's reference and the transcript version, in one statement. */
export async function findEpisodeDetail(db: Queryable, ref: string): Promise<EpisodeDetailRow | null> {
  const { rows } = await db.query<EpisodeDetailRow>(
    `select e.*, ${podcastReferenceOf('e.podcast_id')} as podcast, ${transcriptVersionOf('e.id')} as transcript_version
       from (select ${COLUMNS} from catalog_episodes where id = $1::text
             union all (select ${COLUMNS} from catalog_episodes where slug = $1::text order by published_at desc, id limit 1)
             limit 1) e`,
    [ref],
  );
  return rows[0] ?? null;
}

export async function catalogEpisodesByIds(db: Queryable, ids: readonly string[]): Promise<EpisodeRow[]> {
  const { rows } = await db.query<EpisodeRow>(
    `select ${COLUMNS} from catalog_episodes where id = any($1::text[])`,
    [ids],
  );
  return rows;
}

/** A show's speaker: the one person (by entity, else person, else name) across its episodes. */
export interface PodcastSpeakerRow {
  name: string | null;
  role: string;
  entity_id: string | null;
  person_id: string | null;
  occurrences: number;
}

/** How many of a show's latest episodes its speakers are counted over. */
const SPEAKER_EPISODES = 1000;

/**
 * A show's most frequent speakers (docs/catalog.md, "A show's speakers"): each speaker of its
 * latest SPEAKER_EPISODES episodes, known by entity id, else person id, else name (case-folded);
 * `occurrences` counts those episodes they speak in; their name is the latest episode's, their
 * role the one of most of their episodes (the latest among equals). Most occurrences first, then
 * the latest to speak.
 */
export async function podcastSpeakers(db: Queryable, podcastId: string, limit: number) {
  const { rows } = await db.query<PodcastSpeakerRow>(
    `with spoken as (
       select distinct on (e.id, s.k) s.k, e.published_at, s.name, s.role, s.entity_id, s.person_id
         from (select id, published_at, speakers from catalog_episodes where podcast_id = $1
                order by published_at desc, id desc limit $3) e
        cross join lateral (
          select coalesce('e:' || entity_id, 'p:' || person_id, 'n:' || lower(name)) as k,
                 name, role, entity_id, person_id
            from jsonb_array_elements(e.speakers) x,
                 -- An empty id or name is none (as everywhere in the catalog), not one shared key.
                 lateral (select nullif(x->>'entity_id', '') as entity_id, nullif(x->>'person_id', '') as person_id,
                                 nullif(x->>'name', '') as name, x->>'role' as role) v) s
        where s.k is not null
        order by e.id, s.k, s.name nulls last
     ),
     speakers as (
       select k, count(*)::int as occurrences, max(published_at) as last_at,
              (array_agg(name order by published_at desc, name) filter (where name is not null))[1] as name,
              (array_agg(entity_id order by published_at desc, entity_id) filter (where entity_id is not null))[1] as entity_id,
              (array_agg(person_id order by published_at desc, person_id) filter (where person_id is not null))[1] as person_id
         from spoken group by k
        order by occurrences desc, last_at desc, k limit $2
     ),
     roles as (
       select k, role, count(*) as n, max(published_at) as last_at from spoken
        where k in (select k from speakers) group by k, role
     )
     select s.occurrences, s.name, s.entity_id, s.person_id,
            (select r.role from roles r where r.k = s.k
              order by r.n desc, r.last_at desc, r.role limit 1) as role
       from speakers s
      order by s.occurrences desc, s.last_at desc, s.k`,
    [podcastId, limit, SPEAKER_EPISODES],
  );
  return rows;
}
