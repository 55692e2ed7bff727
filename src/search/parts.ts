import type { EpisodeRow } from '../../projections/catalog-episodes/queries.ts';
import type { ClipRow } from '../../projections/clips/queries.ts';
import { type EntityRow, entityRowsJson } from '../../projections/entities/queries.ts';
import type { PodcastRow } from '../../projections/podcasts/queries.ts';
import type { SegmentRow } from '../../projections/segments/queries.ts';
import { CHUNK_LINES, type StoredLine } from '../../projections/transcripts/projection.ts';
import { wantedChunks, wantedPositions } from '../../projections/transcripts/queries.ts';
import type { SpeakerEntities } from '../catalog/references.ts';
import type { Queryable } from '../db/db.ts';
import { toEntity } from '../entities/view.ts';

/** What an item shows of an episode: the columns of its episode block, and its speakers for the windows. */
export type PartEpisode = Pick<
  EpisodeRow,
  | 'id'
  | 'podcast_id'
  | 'slug'
  | 'title'
  | 'audio_url'
  | 'image_url'
  | 'explicit'
  | 'duration_seconds'
  | 'published_at'
  | 'speakers'
>;
/** What an episode block shows of the podcast. */
export type PartPodcast = Pick<
  PodcastRow,
  'title' | 'slug' | 'image_url' | 'popularity' | 'bias' | 'explicit'
>;
export type PartSegment = Omit<SegmentRow, 'episode_id' | 'podcast_id' | 'published_at'>;
export type PartClip = Omit<ClipRow, 'episode_id' | 'podcast_id' | 'published_at'>;

/** An episode with what its items are built from. */
export interface EpisodeParts {
  episode: PartEpisode;
  podcast: PartPodcast | undefined;
  lines: StoredLine[];
  segments: PartSegment[];
  clips: PartClip[];
  /** The entities its clips' speakers name (entity_id, person_id), as their clips show them. */
  speakerEntities: SpeakerEntities;
}

interface PartsRow extends PartEpisode {
  podcast_found: boolean;
  podcast_title: string;
  podcast_slug: string | null;
  podcast_image_url: string | null;
  podcast_popularity: number | null;
  podcast_bias: string | null;
  podcast_explicit: boolean | null;
  segments: PartSegment[] | null;
  clips: PartClip[] | null;
  speaker_entities: EntityRow[] | null;
  /** The wanted lines read, as [position, line] pairs. */
  picked: [number, StoredLine][] | null;
  /** The whole transcript when no lines were named: its chunks as one JSON array of arrays. */
  whole: string | null;
}

/**
 * Episodes by id with their podcasts, segments, clips and the entities of the clips' speakers,
 * and their transcript lines, in one statement: only the positions `wanted` names for an episode listed there (a sparse array that
 * ends at the last line read; only the chunks holding them are read), else every line.
 * Segments are in number order, clips highest engagement first.
 */
export async function loadEpisodes(
  db: Queryable,
  ids: readonly string[],
  wanted: ReadonlyMap<string, readonly number[]> = new Map(),
): Promise<Map<string, EpisodeParts>> {
  if (ids.length === 0) return new Map();
  const [lineIds, positions] = wantedPositions(wanted);
  const whole = ids.filter((id) => !wanted.has(id));
  const { rows } = await db.query<PartsRow>(
    `with wanted as (${wantedChunks('$2', '$3')})
     select e.id, e.podcast_id, e.slug, e.title, e.audio_url, e.image_url, e.explicit, e.duration_seconds,
            e.published_at, e.speakers,
            p.id is not null as podcast_found, p.title as podcast_title, p.slug as podcast_slug,
            p.image_url as podcast_image_url, p.popularity as podcast_popularity, p.bias as podcast_bias,
            p.explicit as podcast_explicit,
            (select json_agg(s order by s.number, s.id)
               from (select id, number, title, type, description, summary, audio_url, read_type, start_line,
                            end_line, start_seconds, end_seconds
                       from segments where episode_id = e.id) s) as segments,
            (select json_agg(c order by c.engagement_score desc, c.id)
               from (select id, title, type, start_seconds, end_seconds, engagement_score, description,
                            intro_statement, audio_url, segment_id, speaker
                       from clips where episode_id = e.id) c) as clips,
            ${entityRowsJson(
              `select v.id from clips c
                 cross join lateral (values (c.speaker->>'entity_id'), (c.speaker->>'person_id')) v(id)
                where c.episode_id = e.id and v.id <> ''`,
            )} as speaker_entities,
            (select json_agg(json_build_array(w.chunk * ${CHUNK_LINES} + l.n - 1, l.line))
               from wanted w
               join transcript_chunks c on c.episode_id = w.episode_id and c.chunk = w.chunk
               cross join lateral json_array_elements(c.lines::json) with ordinality as l(line, n)
              where w.episode_id = e.id and l.n = any(w.wanted)) as picked,
            case when e.id = any($4::text[]) then
              (select (select '[' || string_agg(c.lines, ',' order by c.chunk) || ']'
                         from transcript_chunks c where c.episode_id = t.episode_id)
                 from transcripts t where t.episode_id = e.id) end as whole
       from catalog_episodes e left join podcasts p on p.id = e.podcast_id
      where e.id = any($1::text[])`,
    [ids, lineIds, positions, whole],
  );
  return new Map(rows.map((row): [string, EpisodeParts] => [row.id, partsOf(row)]));
}

function partsOf(row: PartsRow): EpisodeParts {
  const lines: StoredLine[] = [];
  if (row.whole !== null) lines.push(...(JSON.parse(row.whole) as StoredLine[][]).flat());
  for (const [position, line] of row.picked ?? []) lines[position] = line;
  return {
    episode: {
      id: row.id,
      podcast_id: row.podcast_id,
      slug: row.slug,
      title: row.title,
      audio_url: row.audio_url,
      image_url: row.image_url,
      explicit: row.explicit,
      duration_seconds: row.duration_seconds,
      published_at: row.published_at,
      speakers: row.speakers,
    },
    podcast: row.podcast_found
      ? {
          title: row.podcast_title,
          slug: row.podcast_slug,
          image_url: row.podcast_image_url,
          popularity: row.podcast_popularity,
          bias: row.podcast_bias,
          explicit: row.podcast_explicit,
        }
      : undefined,
    lines,
    segments: row.segments ?? [],
    clips: row.clips ?? [],
    speakerEntities: new Map((row.speaker_entities ?? []).map((r) => [r.id, toEntity(r)])),
  };
}
