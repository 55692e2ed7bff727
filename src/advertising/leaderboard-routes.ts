import type { FastifyInstance } from 'fastify';
import { METRICS, type Metric, sponsorInfo } from '../../projections/ad-leaderboard/queries.ts';
import { compact } from '../catalog/compact.ts';
import { offsetCursor } from '../catalog/params.ts';
import { instant } from '../catalog/schemas.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { companyCompacts, companyOrBare } from './companies.ts';
import type { Leaderboard } from './leaderboard.ts';
import { assertPremium, boundsOf, companyIdOf, publisherPodcastIds } from './params.ts';
import { leaderboardEntrySchema } from './schemas.ts';

interface LeaderboardQuerystring {
  metric: Metric;
  since?: string;
  until?: string;
  company_id?: string;
  publisher_id?: string;
  limit: number;
  cursor?: string;
}

/** GET /v1/podcasts/advertising/leaderboard (docs/advertising.md, "Leaderboard"). */
export function leaderboardRoutes(leaderboard: Leaderboard) {
  return async function routes(app: FastifyInstance) {
    app.get<{ Querystring: LeaderboardQuerystring }>(
      '/v1/podcasts/advertising/leaderboard',
      {
        schema: {
          tags: ['advertising'],
          summary: 'Top sponsors ranked by ads, shows or episodes (premium)',
          querystring: {
            type: 'object',
            properties: {
              metric: { enum: METRICS, default: 'ad_count' },
              since: instant,
              until: instant,
              company_id: { type: 'string', minLength: 1, maxLength: 200 },
              publisher_id: { type: 'string', minLength: 1, maxLength: 200 },
              ...pageQuery,
            },
          },
          response: { 200: pageOf(leaderboardEntrySchema), ...problemResponses(400, 401, 402, 422) },
        },
      },
      async (request) => {
        // The plan check runs beside a snapshot read; before anything else is resolved or counted.
        const gate = assertPremium(app.db, request);
        gate.catch(() => {});
        const query = request.query;
        if (query.company_id !== undefined || query.publisher_id !== undefined) await gate;
        const { since, until } = boundsOf(query.since, query.until);
        const pages = offsetCursor(app.cursors, query as unknown as Record<string, unknown>);
        const offset = pages.offset(query.cursor);
        const companyId =
          query.company_id === undefined ? undefined : await companyIdOf(app.db, query.company_id);
        const podcastIds =
          query.publisher_id === undefined
            ? undefined
            : await publisherPodcastIds(app.db, query.publisher_id);
        const key = JSON.stringify([since?.toISOString(), until?.toISOString(), companyId, podcastIds]);
        const rows = await leaderboard.page(
          app.db,
          { metric: query.metric, since, until, companyId, podcastIds, key },
          offset,
          query.limit + 1,
          gate,
        );
        const shown = rows.slice(0, query.limit);
        const info = await sponsorInfo(
          app.db,
          shown.filter((r) => !r.info).map((r) => r.sponsor_key),
        );
        for (const row of shown) if (row.info) info.set(row.sponsor_key, row.info);
        const companies = await companyCompacts(
          app.db,
          [...info.values()].map((i) => i.company_id),
        );
        const data = shown.map((row) => {
          const sponsor = info.get(row.sponsor_key);
          const name = sponsor?.name ?? row.sponsor_key;
          return {
            rank: row.rank,
            sponsor: compact({
              id: row.sponsor_key,
              name,
              ad_count: row.ad_count,
              podcast_reach: row.podcast_reach,
              episode_reach: row.episode_reach,
              first_seen_at: row.first_seen_at,
              last_seen_at: row.last_seen_at,
              company: sponsor?.company_id ? companyOrBare(companies, sponsor.company_id, name) : undefined,
            }),
          };
        });
        const last = shown.at(-1);
        return rows.length > query.limit && last
          ? { data, has_more: true, cursor: pages.next(last.rank) }
          : { data, has_more: false };
      },
    );
  };
}
