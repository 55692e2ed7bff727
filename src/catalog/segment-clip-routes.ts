import type { FastifyInstance } from 'fastify';
import { findCatalogEpisode } from '../../projections/catalog-episodes/queries.ts';
import { type ClipRow, findClip, listClips } from '../../projections/clips/queries.ts';
import { resolvePodcastId } from '../../projections/podcasts/queries.ts';
import { findSegment, listSegments, segmentsOfClips } from '../../projections/segments/queries.ts';
import type { Queryable } from '../db/db.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { isClipPosition, isSegmentPosition, segmentPage } from './pages.ts';
import { assertRange, instantOf } from './params.ts';
import { entityIdsOf, speakerEntities } from './references.ts';
import { clipSchema, idParams, instant, segmentSchema } from './schemas.ts';
import type { transcriptCache } from './transcript-cache.ts';
import {
  sendTranscript,
  type TranscriptQuery,
  transcriptQuery,
  transcriptResponses,
} from './transcript-reply.ts';
import { episodeReferences, toClip, toSegment } from './views.ts';

/** The segment types of the spec. */
export const SEGMENT_TYPES = [
  'INTRO',
  'PERSONAL_BANTER',
  'TOPIC_DISCUSSION',
  'INTERVIEW',
  'TRANSITION',
  'AD',
  'OUTRO',
];
const CLIP_TYPES = [
  'SPICY',
  'CONTROVERSIAL',
  'EMOTIONAL',
  'FUNNY',
  'SHOCKING',
  'INSIGHTFUL',
  'INFORMATIVE',
  'EDUCATIONAL',
  'PHILOSOPHICAL',
  'AHA_MOMENT',
  'NOTABLE_LINE',
  'BEST_STORY',
  'DEBATE_DISAGREEMENT',
];

const ref = { type: 'string', minLength: 1, maxLength: 200 } as const;

async function clipItems(db: Queryable, clips: ClipRow[]) {
  const [episodes, segments, entities] = await Promise.all([
    episodeReferences(
      db,
      clips.map((c) => c.episode_id),
    ),
    segmentsOfClips(db, clips),
    speakerEntities(
      db,
      clips.flatMap((c) => [c.speaker?.entity_id, c.speaker?.person_id]),
    ),
  ]);
  return clips.map((c) =>
    toClip(c, {
      ...(episodes.get(c.episode_id) ? { episode: episodes.get(c.episode_id)! } : {}),
      segment: segments.get(c.id),
      entities,
    }),
  );
}

async function clipOr404(db: Queryable, id: string) {
  const clip = await findClip(db, id);
  if (!clip) throw new NotFoundError('clip_not_found', `No clip ${id}.`);
  return clip;
}

/** The lines of an episode a clip covers: those overlapping its seconds. */
async function clipTranscript(db: Queryable, clip: ClipRow, transcripts: Transcripts) {
  const [episode, transcript] = await Promise.all([
    findCatalogEpisode(db, clip.episode_id),
    transcripts(db, clip.episode_id),
  ]);
  if (!transcript) throw new NotFoundError('transcript_not_found', `Clip ${clip.id} has no transcript.`);
  return {
    episodeId: clip.episode_id,
    language: transcript.language,
    durationSeconds: episode?.duration_seconds ?? 0,
    lines: transcript.lines.filter(
      (l) => l.end_seconds > clip.start_seconds && l.start_seconds < clip.end_seconds,
    ),
    excerpt: true,
    clipId: clip.id,
  };
}

type Transcripts = ReturnType<typeof transcriptCache>;

export function segmentClipRoutes(transcripts: Transcripts) {
  return async function routes(app: FastifyInstance) {
    app.get<{
      Querystring: {
        episode_id?: string;
        podcast_id?: string;
        type?: string;
        published_after?: string;
        published_before?: string;
        limit: number;
        cursor?: string;
      };
    }>(
      '/v1/podcasts/segments',
      {
        schema: {
          tags: ['catalog'],
          summary: 'List segments of an episode, a podcast or a type (one of them is required)',
          querystring: {
            type: 'object',
            properties: {
              episode_id: ref,
              podcast_id: ref,
              type: { enum: SEGMENT_TYPES },
              published_after: instant,
              published_before: instant,
              ...pageQuery,
            },
          },
          response: { 200: pageOf(segmentSchema), ...problemResponses(400, 401, 422) },
        },
      },
      async (request) => {
        const q = request.query;
        if (q.episode_id === undefined && q.podcast_id === undefined && q.type === undefined)
          throw new ValidationError(
            'filter_required',
            'Name an episode_id, a podcast_id or a type: there is no global feed.',
            [{ location: 'query.episode_id', message: 'one of episode_id, podcast_id or type is required' }],
          );
        const publishedAfter = instantOf(q.published_after);
        const publishedBefore = instantOf(q.published_before);
        assertRange(publishedAfter, publishedBefore, 'published_after', 'published_before');
        const empty = { data: [], has_more: false };
        let episodeId: string | undefined;
        if (q.episode_id !== undefined) {
          const episode = await findCatalogEpisode(app.db, q.episode_id);
          if (!episode) return empty;
          episodeId = episode.id;
        }
        let podcastId: string | undefined;
        if (q.podcast_id !== undefined) {
          const id = await resolvePodcastId(app.db, q.podcast_id);
          if (!id) return empty;
          podcastId = id;
        }
        const after = q.cursor ? app.cursors.decode(q.cursor, 'cursor', isSegmentPosition) : undefined;
        const rows = await listSegments(
          app.db,
          {
            ...(episodeId ? { episodeId } : {}),
            ...(podcastId ? { podcastId } : {}),
            ...(q.type ? { type: q.type } : {}),
            ...(publishedAfter ? { publishedAfter } : {}),
            ...(publishedBefore ? { publishedBefore } : {}),
          },
          q.limit + 1,
          after,
        );
        const episodes = await episodeReferences(
          app.db,
          rows.map((r) => r.episode_id),
        );
        return segmentPage(app.cursors, rows, q.limit, (row) => toSegment(row, episodes.get(row.episode_id)));
      },
    );

    app.get<{ Params: { id: string } }>(
      '/v1/podcasts/segments/:id',
      {
        schema: {
          tags: ['catalog'],
          summary: 'One segment',
          params: idParams,
          response: { 200: segmentSchema, ...problemResponses(401, 404) },
        },
      },
      async (request) => {
        const segment = await findSegment(app.db, request.params.id);
        if (!segment) throw new NotFoundError('segment_not_found', `No segment ${request.params.id}.`);
        const episodes = await episodeReferences(app.db, [segment.episode_id]);
        return toSegment(segment, episodes.get(segment.episode_id));
      },
    );

    app.get<{ Params: { id: string }; Querystring: TranscriptQuery }>(
      '/v1/podcasts/segments/:id/transcript',
      {
        schema: {
          tags: ['catalog'],
          summary: "A segment's transcript lines: dialogue (JSON), text, srt or vtt",
          params: idParams,
          querystring: transcriptQuery,
          response: transcriptResponses(400, 401, 404),
        },
      },
      async (request, reply) => {
        const segment = await findSegment(app.db, request.params.id);
        if (!segment) throw new NotFoundError('segment_not_found', `No segment ${request.params.id}.`);
        const [episode, transcript] = await Promise.all([
          findCatalogEpisode(app.db, segment.episode_id),
          transcripts(app.db, segment.episode_id),
        ]);
        if (!transcript)
          throw new NotFoundError('transcript_not_found', `Segment ${segment.id} has no transcript.`);
        // Segments are contiguous in lines; by seconds only when the producer recorded no lines.
        const byLines = segment.start_line !== null && segment.end_line !== null;
        const lines = transcript.lines.filter((l) =>
          byLines
            ? l.number >= segment.start_line! && l.number <= segment.end_line!
            : l.end_seconds > segment.start_seconds && l.start_seconds < segment.end_seconds,
        );
        return sendTranscript(
          reply,
          {
            episodeId: segment.episode_id,
            language: transcript.language,
            durationSeconds: episode?.duration_seconds ?? 0,
            lines,
            excerpt: true,
            segment: {
              id: segment.id,
              start_seconds: segment.start_seconds,
              end_seconds: segment.end_seconds,
            },
          },
          request.query,
        );
      },
    );

    app.get<{
      Querystring: {
        episode_id?: string;
        podcast_id?: string;
        speaker?: string;
        type?: string;
        min_engagement?: number;
        limit: number;
        cursor?: string;
      };
    }>(
      '/v1/podcasts/clips',
      {
        schema: {
          tags: ['catalog'],
          summary: 'List clips, highest engagement first',
          querystring: {
            type: 'object',
            properties: {
              episode_id: ref,
              podcast_id: ref,
              speaker: ref,
              type: { enum: CLIP_TYPES },
              min_engagement: { type: 'integer', minimum: 0, maximum: 100 },
              ...pageQuery,
            },
          },
          response: { 200: pageOf(clipSchema), ...problemResponses(400, 401) },
        },
      },
      async (request) => {
        const q = request.query;
        const empty = { data: [], has_more: false };
        let episodeId: string | undefined;
        if (q.episode_id !== undefined) {
          const episode = await findCatalogEpisode(app.db, q.episode_id);
          if (!episode) return empty;
          episodeId = episode.id;
        }
        let podcastId: string | undefined;
        if (q.podcast_id !== undefined) {
          const id = await resolvePodcastId(app.db, q.podcast_id);
          if (!id) return empty;
          podcastId = id;
        }
        const speakerIds = q.speaker === undefined ? undefined : await entityIdsOf(app.db, q.speaker);
        const after = q.cursor ? app.cursors.decode(q.cursor, 'cursor', isClipPosition) : undefined;
        const rows = await listClips(
          app.db,
          {
            ...(episodeId ? { episodeId } : {}),
            ...(podcastId ? { podcastId } : {}),
            ...(speakerIds ? { speakerIds } : {}),
            ...(q.type ? { type: q.type } : {}),
            ...(q.min_engagement === undefined ? {} : { minEngagement: q.min_engagement }),
          },
          q.limit + 1,
          after,
        );
        const hasMore = rows.length > q.limit;
        const shown = hasMore ? rows.slice(0, q.limit) : rows;
        const data = await clipItems(app.db, shown);
        const last = shown.at(-1);
        return hasMore && last
          ? { data, has_more: true, cursor: app.cursors.encode({ s: last.engagement_score, i: last.id }) }
          : { data, has_more: false };
      },
    );

    app.get<{ Params: { id: string } }>(
      '/v1/podcasts/clips/:id',
      {
        schema: {
          tags: ['catalog'],
          summary: 'One clip',
          params: idParams,
          response: { 200: clipSchema, ...problemResponses(401, 404) },
        },
      },
      async (request) => {
        const clip = await clipOr404(app.db, request.params.id);
        const [item] = await clipItems(app.db, [clip]);
        return item;
      },
    );

    const clipTranscriptRoute = (url: string, isPublic: boolean) =>
      app.get<{ Params: { id: string }; Querystring: TranscriptQuery }>(
        url,
        {
          ...(isPublic ? { config: { auth: 'public' as const } } : {}),
          schema: {
            tags: [isPublic ? 'embed' : 'catalog'],
            summary: isPublic
              ? "A clip's transcript for embedding (public): dialogue (JSON), text, srt or vtt"
              : "A clip's transcript lines: dialogue (JSON), text, srt or vtt",
            params: idParams,
            querystring: transcriptQuery,
            response: transcriptResponses(...(isPublic ? [400, 404] : [400, 401, 404])),
            ...(isPublic ? { security: [] } : {}),
          },
        },
        async (request, reply) => {
          const clip = await clipOr404(app.db, request.params.id);
          return sendTranscript(reply, await clipTranscript(app.db, clip, transcripts), request.query);
        },
      );
    clipTranscriptRoute('/v1/podcasts/clips/:id/transcript', false);
    clipTranscriptRoute('/v1/embed/clips/:id/transcript', true);
  };
}
