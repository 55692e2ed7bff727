import type { AdRow } from '../../projections/ads/queries.ts';
import { episodeReferences, toAd } from '../catalog/views.ts';
import type { Queryable } from '../db/db.ts';
import { companyCompacts } from './companies.ts';

/**
 * Ads with their company {id, slug, name} and, when asked, their episode: the one shape of an ad
 * read, whether listed by `/episodes/{id}/ads`, embedded by `include=ads` or among recent ads.
 */
export async function placedAds(db: Queryable, ads: AdRow[], withEpisode: boolean) {
  const companies = await companyCompacts(
    db,
    ads.map((a) => a.sponsor_company_id),
  );
  const episodes = withEpisode
    ? await episodeReferences(
        db,
        ads.map((a) => a.episode_id),
      )
    : new Map();
  return ads.map((a) => {
    const company = a.sponsor_company_id ? companies.get(a.sponsor_company_id) : undefined;
    return {
      ...toAd(a),
      ...(a.sponsor_company_id
        ? {
            company: {
              id: a.sponsor_company_id,
              ...(company ? { slug: company.slug, name: company.name } : {}),
            },
          }
        : {}),
      ...(withEpisode && episodes.has(a.episode_id) ? { episode: episodes.get(a.episode_id) } : {}),
    };
  });
}
