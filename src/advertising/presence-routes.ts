import type { FastifyInstance } from 'fastify';
import { SPONSOR_KEY, sponsorInfo } from '../../projections/ad-leaderboard/queries.ts';
import { adSeries, adSeriesTotals, type Interval } from '../../projections/ad-leaderboard/timeseries.ts';
import type { AdRow } from '../../projections/ads/queries.ts';
import { episodeOr404 } from '../catalog/episode-routes.ts';
import { offsetCursor } from '../catalog/params.ts';
import { podcastIdOr404 } from '../catalog/podcast-routes.ts';
import { idParams, instant } from '../catalog/schemas.ts';
import type { Queryable } from '../db/db.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { bucketCount, bucketStarts, utcDate } from './buckets.ts';
import { companyCompacts, companyOrBare, resolveCompanyId } from './companies.ts';
import { boundsOf, companyIdOf, podcastIdOf, publisherPodcastIds, unresolved } from './params.ts';
import { placedAds } from './placed-ads.ts';
import {
  companyAdvertisingSchema,
  placedAdSchema,
  podcastAdvertisingSchema,
  timeseriesSchema,
} from './schemas.ts';

/** At most this many buckets in one timeseries (docs/advertising.md). */
const MAX_BUCKETS = 5000;
const RECENT_ADS = 10;
const AD_COLUMNS = `id, episode_id, sponsor_id, sponsor_name, sponsor_company_id, product, offer_description,
  sponsor_url, read_type, placement_type, start_seconds, end_seconds, is_network_promo`;

interface TimeseriesQuery {
  sponsor_id?: string;
  company_id?: string;
  podcast_id?: string;
  publisher_id?: string;
  since?: string;
  until?: string;
  interval: Interval;
}

async function recentAds(db: Queryable, column: 'sponsor_company_id' | 'podcast_id', value: string) {
  const { rows } = await db.query<AdRow>(
    `select ${AD_COLUMNS} from ads where ${column} = $1::text and not is_network_promo
      order by published_at desc, id limit ${RECENT_ADS}`,
    [value],
  );
  return placedAds(db, rows, true);
}

/** The timeseries and presence routes; `now` is the default end of a timeseries. */
export const advertisingRoutes = (now: () => Date) =>
  async function routes(app: FastifyInstance) {
    app.get<{ Querystring: TimeseriesQuery }>(
      '/v1/podcasts/advertising/timeseries',
      {
        schema: {
          tags: ['advertising'],
          summary: "A sponsor's or a company's ads per day, week or month",
          querystring: {
            type: 'object',
            properties: {
              sponsor_id: { type: 'string', minLength: 1, maxLength: 200 },
              company_id: { type: 'string', minLength: 1, maxLength: 200 },
              podcast_id: { type: 'string', minLength: 1, maxLength: 200 },
              publisher_id: { type: 'string', minLength: 1, maxLength: 200 },
              since: instant,
              until: instant,
              interval: { enum: ['day', 'week', 'month'], default: 'week' },
            },
          },
          response: { 200: timeseriesSchema, ...problemResponses(400, 401, 422) },
        },
      },
      async (request) => {
        const q = request.query;
        if ((q.sponsor_id === undefined) === (q.company_id === undefined))
          throw new ValidationError('invalid_parameter', 'Give exactly one of sponsor_id and company_id.', [
            {
              location: 'query.sponsor_id',
              message: 'exactly one of sponsor_id, company_id is required',
              value: q.sponsor_id ?? null,
            },
            {
              location: 'query.company_id',
              message: 'exactly one of sponsor_id, company_id is required',
              value: q.company_id ?? null,
            },
          ]);
        const bounds = boundsOf(q.since, q.until, true);
        const until = bounds.until ?? now();
        const companyId = q.company_id === undefined ? undefined : await companyIdOf(app.db, q.company_id);
        if (q.sponsor_id !== undefined) {
          const { rowCount } = await app.db.query(
            `select 1 from ads where ${SPONSOR_KEY} = $1::text and not is_network_promo limit 1`,
            [q.sponsor_id],
          );
          if (!rowCount)
            throw unresolved('sponsor_id', q.sponsor_id, 'GET /v1/podcasts/advertising/leaderboard');
        }
        let podcastIds: string[] | undefined;
        if (q.podcast_id !== undefined) podcastIds = [await podcastIdOf(app.db, q.podcast_id)];
        if (q.publisher_id !== undefined) {
          const ofPublisher = await publisherPodcastIds(app.db, q.publisher_id);
          podcastIds = podcastIds ? podcastIds.filter((id) => ofPublisher.includes(id)) : ofPublisher;
        }
        const scope = {
          sponsorKeys: q.sponsor_id === undefined ? undefined : [q.sponsor_id],
          companyId,
          podcastIds,
          since: bounds.since,
          until,
        };
        const [totals, series] = await Promise.all([
          adSeriesTotals(app.db, scope),
          adSeries(app.db, scope, q.interval),
        ]);
        const from = bounds.since ?? totals.first_at ?? until;
        if (bucketCount(from, until, q.interval) > MAX_BUCKETS)
          throw new ValidationError(
            'too_many_buckets',
            `The range spans more than ${MAX_BUCKETS} ${q.interval} buckets.`,
            [
              {
                location: 'query.interval',
                message: `at most ${MAX_BUCKETS} buckets; use a longer interval or a shorter range`,
                value: q.interval,
              },
            ],
          );
        const counted = new Map(series.map((row) => [row.bucket, row]));
        const buckets = bucketStarts(from, until, q.interval).map((start) => {
          const row = counted.get(start);
          return {
            start,
            count: row?.count ?? 0,
            host_read_count: row?.host_read_count ?? 0,
            pre_recorded_count: row?.pre_recorded_count ?? 0,
          };
        });
        const company = companyId ? (await companyCompacts(app.db, [companyId])).get(companyId) : undefined;
        const sum = (field: 'count' | 'host_read_count' | 'pre_recorded_count') =>
          buckets.reduce((total, b) => total + b[field], 0);
        return {
          ...(q.sponsor_id !== undefined ? { sponsor_id: q.sponsor_id } : {}),
          ...(companyId ? { company_id: companyId } : {}),
          ...(company?.slug ? { company_slug: company.slug } : {}),
          interval: q.interval,
          start: buckets[0]?.start ?? utcDate(until),
          end: utcDate(until),
          buckets,
          total_ads: sum('count'),
          host_read_count: sum('host_read_count'),
          pre_recorded_count: sum('pre_recorded_count'),
          distinct_episodes: totals.episodes,
          distinct_podcasts: totals.podcasts,
        };
      },
    );

    app.get<{ Params: { id: string } }>(
      '/v1/companies/:id/podcast/advertising',
      {
        schema: {
          tags: ['advertising'],
          summary: "A company's podcast advertising: totals, reach, read types, placements, recent ads",
          params: idParams,
          response: { 200: companyAdvertisingSchema, ...problemResponses(401, 404) },
        },
      },
      async (request) => {
        const companyId = await resolveCompanyId(app.db, request.params.id);
        if (!companyId) throw new NotFoundError('company_not_found', `No company ${request.params.id}.`);
        const { rows } = await app.db.query<Record<string, number>>(
          `select count(*)::int as total_ads, count(distinct podcast_id)::int as podcast_reach,
                count(distinct episode_id)::int as episode_reach,
                (count(*) filter (where read_type = 'HOST_READ'))::int as host_read,
                (count(*) filter (where read_type = 'PRE_RECORDED'))::int as pre_recorded,
                (count(*) filter (where placement_type = 'PRE_ROLL'))::int as pre_roll,
                (count(*) filter (where placement_type = 'MID_ROLL'))::int as mid_roll,
                (count(*) filter (where placement_type = 'POST_ROLL'))::int as post_roll
           from ads where sponsor_company_id = $1::text and not is_network_promo`,
          [companyId],
        );
        const t = rows[0]!;
        const company = (await companyCompacts(app.db, [companyId])).get(companyId);
        return {
          company_id: companyId,
          ...(company?.slug ? { company_slug: company.slug } : {}),
          ...(company ? { company } : {}),
          total_ads: t.total_ads!,
          podcast_reach: t.podcast_reach!,
          episode_reach: t.episode_reach!,
          read_type_breakdown: { host_read: t.host_read!, pre_recorded: t.pre_recorded! },
          placement_breakdown: { pre_roll: t.pre_roll!, mid_roll: t.mid_roll!, post_roll: t.post_roll! },
          recent_ads: await recentAds(app.db, 'sponsor_company_id', companyId),
        };
      },
    );

    app.get<{ Params: { id: string } }>(
      '/v1/podcasts/:id/advertising',
      {
        schema: {
          tags: ['advertising'],
          summary: "A podcast's sponsors and recent ads",
          params: idParams,
          response: { 200: podcastAdvertisingSchema, ...problemResponses(401, 404) },
        },
      },
      async (request) => {
        const podcastId = await podcastIdOr404(app.db, request.params.id);
        const { rows } = await app.db.query<{
          sponsor_key: string;
          ad_count: number;
          first_seen_at: Date;
          last_seen_at: Date;
        }>(
          `select ${SPONSOR_KEY} as sponsor_key, count(*)::int as ad_count,
                min(published_at) as first_seen_at, max(published_at) as last_seen_at
           from ads where podcast_id = $1::text and not is_network_promo
          group by 1 order by ad_count desc, last_seen_at desc, sponsor_key`,
          [podcastId],
        );
        const info = await sponsorInfo(
          app.db,
          rows.map((r) => r.sponsor_key),
        );
        const companies = await companyCompacts(
          app.db,
          [...info.values()].map((i) => i.company_id),
        );
        return {
          podcast_id: podcastId,
          total_ads: rows.reduce((n, r) => n + r.ad_count, 0),
          sponsors: rows.map((r) => {
            const sponsor = info.get(r.sponsor_key);
            const name = sponsor?.name ?? r.sponsor_key;
            return {
              sponsor: {
                id: r.sponsor_key,
                name,
                ...(sponsor?.company_id
                  ? { company: companyOrBare(companies, sponsor.company_id, name) }
                  : {}),
              },
              ad_count: r.ad_count,
              first_seen_at: r.first_seen_at,
              last_seen_at: r.last_seen_at,
            };
          }),
          recent_ads: await recentAds(app.db, 'podcast_id', podcastId),
        };
      },
    );

    app.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
      '/v1/podcasts/episodes/:id/ads',
      {
        schema: {
          tags: ['advertising'],
          summary: "An episode's ad reads in play order, each with its company",
          params: idParams,
          querystring: { type: 'object', properties: { ...pageQuery } },
          response: { 200: pageOf(placedAdSchema), ...problemResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const episode = await episodeOr404(app.db, request.params.id);
        const pages = offsetCursor(app.cursors, { episode: episode.id });
        const offset = pages.offset(request.query.cursor);
        const { rows } = await app.db.query<AdRow>(
          `select ${AD_COLUMNS} from ads where episode_id = $1::text
          order by start_seconds nulls last, id offset $2::int limit $3::int`,
          [episode.id, offset, request.query.limit + 1],
        );
        const data = await placedAds(app.db, rows.slice(0, request.query.limit), false);
        return rows.length > request.query.limit
          ? { data, has_more: true, cursor: pages.next(offset + request.query.limit) }
          : { data, has_more: false };
      },
    );
  };
