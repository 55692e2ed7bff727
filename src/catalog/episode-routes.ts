import type { FastifyInstance } from 'fastify';
import { adsOfEpisode } from '../../projections/ads/queries.ts';
import {
  type EpisodeDetailRow,
  type EpisodeRow,
  findCatalogEpisode,
  findEpisodeDetail,
  listEpisodes,
} from '../../projections/catalog-episodes/queries.ts';
import { listClips } from '../../projections/clips/queries.ts';
import { findCompany } from '../../projections/entities/knowledge.ts';
import { resolvePodcastId } from '../../projections/podcasts/queries.ts';
import { listSegments, segmentsOfClips } from '../../projections/segments/queries.ts';
import { placedAds } from '../advertising/placed-ads.ts';
import type { Queryable } from '../db/db.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { compact } from './compact.ts';
import { episodePage, isEpisodePosition, isSegmentPosition, segmentPage } from './pages.ts';
import { assertRange, INT4_MAX, instantOf, listOf } from './params.ts';
import { entityIdsOf, speakerEntities } from './references.ts';
import type { responseCache } from './response-cache.ts';
import { episodeSchema, idParams, instant, segmentSchema } from './schemas.ts';
import { SharedReads } from './shared-reads.ts';
import { joined, type transcriptCache } from './transcript-cache.ts';
import { publicLine } from './transcript-format.ts';
import {
  sendTranscript,
  type TranscriptQuery,
  transcriptQuery,
  transcriptResponses,
} from './transcript-reply.ts';
import {
  podcastReferences,
  REFERENCE_CACHE,
  toClip,
  toEpisode,
  toEpisodeReference,
  toEpisodeSpeaker,
  toEpisodeTopic,
  toPodcastReference,
  toSegment,
} from './views.ts';

const EPISODE_INCLUDES = ['transcript', 'segments', 'clips', 'speakers', 'topics', 'ads'] as const;
type Include = (typeof EPISODE_INCLUDES)[number];

/** Every value of include, or 400 invalid_parameter naming the first unknown one. */
function includesOf(value: string | undefined): Set<Include> {
  const values = listOf(value) ?? [];
  const unknown = values.find((v) => !(EPISODE_INCLUDES as readonly string[]).includes(v));
  if (unknown !== undefined)
    throw new BadRequestError('invalid_parameter', `include accepts ${EPISODE_INCLUDES.join(', ')}.`, [
      { location: 'query.include', message: `unknown value ${JSON.stringify(unknown)}`, value },
    ]);
  return new Set(values as Include[]);
}

export async function episodeOr404(db: Queryable, ref: string): Promise<EpisodeRow> {
  const episode = await findCatalogEpisode(db, ref);
  if (!episode) throw new NotFoundError('episode_not_found', `No episode ${ref}.`);
  return episode;
}

/**
 * The episode with its show's reference and transcript version (one query, shared by the requests
 * for the same reference meanwhile: SharedReads), or 404. The row is shared: never changed.
 */
async function episodeDetailOr404(
  db: Queryable,
  details: SharedReads<EpisodeDetailRow | null>,
  ref: string,
): Promise<EpisodeDetailRow> {
  const episode = await details.after(ref, () => findEpisodeDetail(db, ref));
  if (!episode) throw new NotFoundError('episode_not_found', `No episode ${ref}.`);
  return episode;
}

/** An episode's clips with the segments they name: a clip's segment never depends on the other includes. */
async function clipsWithSegments(db: Queryable, episodeId: string) {
  const clips = await listClips(db, { episodeId }, 1000);
  return { clips, segments: await segmentsOfClips(db, clips) };
}

interface EpisodeListQuery {
  podcast_id?: string;
  entity_id?: string;
  company_id?: string;
  language?: string;
  published_after?: string;
  published_before?: string;
  has_transcript?: boolean;
  min_duration?: number;
  max_duration?: number;
  limit: number;
  cursor?: string;
}

type Transcripts = ReturnType<typeof transcriptCache>;

export function episodeRoutes(transcripts: Transcripts, cache: ReturnType<typeof responseCache>) {
  return async function routes(app: FastifyInstance) {
    cache(app);
    const details = new SharedReads<EpisodeDetailRow | null>();
    app.get<{ Querystring: EpisodeListQuery }>(
      '/v1/podcasts/episodes',
      {
        config: { catalogCache: REFERENCE_CACHE },
        schema: {
          tags: ['catalog'],
          summary: 'List episodes across podcasts, newest first',
          querystring: {
            type: 'object',
            properties: {
              podcast_id: { type: 'string', minLength: 1, maxLength: 200 },
              entity_id: { type: 'string', minLength: 1, maxLength: 200 },
              company_id: { type: 'string', minLength: 1, maxLength: 200 },
              language: { type: 'string', pattern: '^[A-Za-z]{2}$' },
              published_after: instant,
              published_before: instant,
              has_transcript: { type: 'boolean' },
              min_duration: { type: 'integer', minimum: 0, maximum: INT4_MAX },
              max_duration: { type: 'integer', minimum: 0, maximum: INT4_MAX },
              ...pageQuery,
            },
          },
          response: { 200: pageOf(episodeSchema), ...problemResponses(400, 401, 422) },
        },
      },
      async (request) => {
        const q = request.query;
        const publishedAfter = instantOf(q.published_after);
        const publishedBefore = instantOf(q.published_before);
        assertRange(publishedAfter, publishedBefore, 'published_after', 'published_before');
        assertRange(q.min_duration, q.max_duration, 'min_duration', 'max_duration');
        const empty = { data: [], has_more: false };
        let podcastId: string | undefined;
        if (q.podcast_id !== undefined) {
          const id = await resolvePodcastId(app.db, q.podcast_id);
          if (!id) return empty;
          podcastId = id;
        }
        let entityIds: string[] | undefined;
        if (q.entity_id !== undefined) entityIds = await entityIdsOf(app.db, q.entity_id);
        if (q.company_id !== undefined) {
          const company = await findCompany(app.db, q.company_id);
          if (!company || (entityIds && !entityIds.includes(company.id))) return empty;
          entityIds = [company.id];
        }
        const after = q.cursor ? app.cursors.decode(q.cursor, 'cursor', isEpisodePosition) : undefined;
        const rows = await listEpisodes(
          app.db,
          {
            ...(podcastId ? { podcastId } : {}),
            ...(entityIds ? { entityIds } : {}),
            ...(q.language ? { language: q.language } : {}),
            ...(publishedAfter ? { publishedAfter } : {}),
            ...(publishedBefore ? { publishedBefore } : {}),
            ...(q.has_transcript === undefined ? {} : { hasTranscript: q.has_transcript }),
            ...(q.min_duration === undefined ? {} : { minDuration: q.min_duration }),
            ...(q.max_duration === undefined ? {} : { maxDuration: q.max_duration }),
          },
          q.limit + 1,
          after,
        );
        const podcasts = await podcastReferences(
          app.db,
          rows.map((r) => r.podcast_id),
        );
        return episodePage(app.cursors, rows, q.limit, (row) => toEpisode(row, podcasts.get(row.podcast_id)));
      },
    );

    app.get<{ Params: { id: string }; Querystring: { include?: string } }>(
      '/v1/podcasts/episodes/:id',
      {
        config: { catalogCache: REFERENCE_CACHE },
        schema: {
          tags: ['catalog'],
          summary: 'One episode by id or slug, with the sections named in include',
          params: idParams,
          querystring: {
            type: 'object',
            properties: {
              include: { type: 'string', maxLength: 200, description: EPISODE_INCLUDES.join(', ') },
            },
          },
          response: { 200: episodeSchema, ...problemResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const include = includesOf(request.query.include);
        const episode = await episodeDetailOr404(app.db, details, request.params.id);
        const podcast = episode.podcast ? toPodcastReference(episode.podcast) : undefined;
        const item: Record<string, unknown> = toEpisode(episode, podcast);
        const [transcript, segments, clips, ads, entities] = await Promise.all([
          include.has('transcript')
            ? transcripts.atVersion(app.db, episode.id, episode.transcript_version)
            : null,
          include.has('segments') ? listSegments(app.db, { episodeId: episode.id }, 1000) : null,
          include.has('clips') ? clipsWithSegments(app.db, episode.id) : null,
          include.has('ads') ? adsOfEpisode(app.db, episode.id) : null,
          include.has('speakers') || include.has('clips')
            ? speakerEntities(
                app.db,
                episode.speakers.flatMap((s) => [s.entity_id, s.person_id]),
              )
            : new Map(),
        ]);
        if (include.has('speakers'))
          item.speakers = episode.speakers.map((s) => toEpisodeSpeaker(s, entities));
        if (include.has('topics')) item.topics = episode.topics.map(toEpisodeTopic);
        if (segments) item.segments = segments.map((s) => toSegment(s));
        if (clips)
          item.clips = clips.clips.map((c) => toClip(c, { segment: clips.segments.get(c.id), entities }));
        if (ads) item.ads = await placedAds(app.db, ads, false);
        if (!include.has('transcript') || !transcript) return item;
        // The lines serialized once per transcript version (2,000 of them cost far more than the rest
        // of the request), joined to the episode serialized by its response schema.
        const head = JSON.stringify(
          compact({
            episode_id: episode.id,
            language: transcript.language,
            duration_seconds: episode.duration_seconds,
            excerpt: false,
          }),
        );
        const body = reply.serialize(item) as string;
        return reply
          .type('application/json; charset=utf-8')
          .send(
            joined(
              transcript.lines,
              'lines',
              () => JSON.stringify(transcript.lines.map(publicLine)),
              `${body.slice(0, -1)},"transcript":${head.slice(0, -1)},"lines":`,
              '}}',
            ),
          );
      },
    );

    app.get<{ Params: { id: string }; Querystring: TranscriptQuery }>(
      '/v1/podcasts/episodes/:id/transcript',
      {
        config: { catalogCache: true },
        schema: {
          tags: ['catalog'],
          summary: "An episode's transcript: dialogue (JSON), text, srt or vtt",
          params: idParams,
          querystring: transcriptQuery,
          response: transcriptResponses(400, 401, 404),
        },
      },
      async (request, reply) => {
        const episode = await episodeDetailOr404(app.db, details, request.params.id);
        const transcript = await transcripts.atVersion(app.db, episode.id, episode.transcript_version);
        if (!transcript)
          throw new NotFoundError('transcript_not_found', `Episode ${request.params.id} has no transcript.`);
        return sendTranscript(
          reply,
          {
            episodeId: episode.id,
            language: transcript.language,
            durationSeconds: episode.duration_seconds,
            lines: transcript.lines,
            excerpt: false,
          },
          request.query,
        );
      },
    );

    app.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
      '/v1/podcasts/episodes/:id/segments',
      {
        config: { catalogCache: REFERENCE_CACHE },
        schema: {
          tags: ['catalog'],
          summary: "An episode's segments in order",
          params: idParams,
          querystring: { type: 'object', properties: { ...pageQuery } },
          response: { 200: pageOf(segmentSchema), ...problemResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const episode = await episodeOr404(app.db, request.params.id);
        const { limit, cursor } = request.query;
        const after = cursor ? app.cursors.decode(cursor, 'cursor', isSegmentPosition) : undefined;
        const rows = await listSegments(app.db, { episodeId: episode.id }, limit + 1, after);
        const podcasts = await podcastReferences(app.db, [episode.podcast_id]);
        const reference = toEpisodeReference(episode, podcasts.get(episode.podcast_id));
        return segmentPage(app.cursors, rows, limit, (row) => toSegment(row, reference));
      },
    );
  };
}
