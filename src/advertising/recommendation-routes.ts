import type { FastifyInstance } from 'fastify';
import { showsOfGuest } from '../../projections/podcast-links/queries.ts';
import { episodeOr404 } from '../catalog/episode-routes.ts';
import { offsetCursor } from '../catalog/params.ts';
import { podcastIdOr404 } from '../catalog/podcast-routes.ts';
import { entityIdsOf } from '../catalog/references.ts';
import { idParams } from '../catalog/schemas.ts';
import { episodeReferences } from '../catalog/views.ts';
import { NotFoundError } from '../errors.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { scoreBand } from './params.ts';
import {
  guestRecommendations,
  podcastRecommendationsForGuest,
  relatedItems,
  sponsorRecommendations,
} from './recommendations.ts';
import { peopleOf, relatedEpisodes, relatedShows, SHOWN, topicOf } from './related.ts';
import {
  guestRecommendationSchema,
  podcastRecommendationSchema,
  relatedEpisodeSchema,
  relatedPodcastSchema,
  sponsorRecommendationSchema,
} from './schemas.ts';

type PageRequest = { Params: { id: string }; Querystring: { limit: number; cursor?: string } };

const pageSchema = (summary: string, item: object) => ({
  tags: ['recommendations'],
  summary,
  params: idParams,
  querystring: { type: 'object', properties: { ...pageQuery } },
  response: { 200: pageOf(item), ...problemResponses(400, 401, 404) },
});

/** Related shows and episodes, guest, sponsor and show recommendations (docs/advertising.md). */
export async function recommendationRoutes(app: FastifyInstance) {
  /** Pages a ranked list computed whole: an offset cursor bound to the route and the id. */
  async function paged<T>(
    request: { url: string; query: { limit: number; cursor?: string } },
    id: string,
    load: (offset: number, limit: number) => Promise<{ total: number; items: T[] }>,
  ) {
    const pages = offsetCursor(app.cursors, { route: request.url.split('?')[0], id });
    const offset = pages.offset(request.query.cursor);
    const { total, items } = await load(offset, request.query.limit);
    const next = offset + request.query.limit;
    return next < total
      ? { data: items, has_more: true, cursor: pages.next(next) }
      : { data: items, has_more: false };
  }

  app.get<PageRequest>(
    '/v1/podcasts/:id/related',
    { schema: pageSchema('Shows related by guests, sponsors, topics and publisher', relatedPodcastSchema) },
    async (request) => {
      const id = await podcastIdOr404(app.db, request.params.id);
      const related = await relatedShows(app.db, id);
      return paged(request, id, async (offset, limit) => ({
        total: related.shows.length,
        items: await relatedItems(app.db, related, related.shows.slice(offset, offset + limit)),
      }));
    },
  );

  app.get<PageRequest>(
    '/v1/podcasts/episodes/:id/related',
    {
      schema: pageSchema(
        'Episodes related by guests, sponsors, topics, show and publisher',
        relatedEpisodeSchema,
      ),
    },
    async (request) => {
      const episode = await episodeOr404(app.db, request.params.id);
      const related = await relatedEpisodes(app.db, episode.id);
      return paged(request, episode.id, async (offset, limit) => {
        const page = related.slice(offset, offset + limit);
        const [refs, person] = await Promise.all([
          episodeReferences(
            app.db,
            page.map((e) => e.episode_id),
          ),
          peopleOf(
            app.db,
            page.flatMap((e) => e.basis.shared_guest_ids.slice(0, SHOWN)),
          ),
        ]);
        return {
          total: related.length,
          items: page.flatMap((e) => {
            const ref = refs.get(e.episode_id);
            if (!ref) return [];
            const { shared_guest_ids, shared_topics, ...basis } = e.basis;
            return [
              {
                band: scoreBand(e.score),
                score: e.score,
                episode: ref,
                basis: {
                  ...basis,
                  shared_guests: shared_guest_ids.slice(0, SHOWN).map((g) => person(g)),
                  shared_topics: shared_topics.slice(0, SHOWN).map(topicOf),
                },
              },
            ];
          }),
        };
      });
    },
  );

  app.get<PageRequest>(
    '/v1/podcasts/:id/recommendations/guests',
    {
      schema: pageSchema(
        'People who appeared on related shows but not on this one',
        guestRecommendationSchema,
      ),
    },
    async (request) => {
      const id = await podcastIdOr404(app.db, request.params.id);
      const load = guestRecommendations(app.db, await relatedShows(app.db, id));
      return paged(request, id, load);
    },
  );

  app.get<PageRequest>(
    '/v1/podcasts/:id/recommendations/sponsors',
    {
      schema: pageSchema(
        'Sponsors of related shows that do not advertise on this one, with known contacts',
        sponsorRecommendationSchema,
      ),
    },
    async (request) => {
      const id = await podcastIdOr404(app.db, request.params.id);
      const load = sponsorRecommendations(app.db, await relatedShows(app.db, id));
      return paged(request, id, load);
    },
  );

  app.get<PageRequest>(
    '/v1/podcasts/guests/:id/recommendations/podcasts',
    {
      schema: pageSchema(
        'Shows related to those a guest appeared on, minus those',
        podcastRecommendationSchema,
      ),
    },
    async (request) => {
      const ids = await entityIdsOf(app.db, request.params.id);
      if ((await showsOfGuest(app.db, ids, 1)).length === 0) {
        const { rowCount } = await app.db.query('select 1 from entities where id = any($1::text[])', [ids]);
        if (!rowCount) throw new NotFoundError('guest_not_found', `No guest ${request.params.id}.`);
      }
      const load = await podcastRecommendationsForGuest(app.db, ids);
      return paged(request, ids.join(','), load);
    },
  );
}
