import type { Queryable } from '../../src/db/db.ts';

export interface AdRow {
  id: string;
  episode_id: string;
  sponsor_id: string | null;
  sponsor_name: string;
  sponsor_company_id: string | null;
  product: string | null;
  offer_description: string | null;
  sponsor_url: string | null;
  read_type: string | null;
  placement_type: string | null;
  start_seconds: number | null;
  end_seconds: number | null;
  is_network_promo: boolean;
}

/** An episode's ad reads in the order they play. */
export async function adsOfEpisode(db: Queryable, episodeId: string): Promise<AdRow[]> {
  const { rows } = await db.query<AdRow>(
    `select id, episode_id, sponsor_id, sponsor_name, sponsor_company_id, product, offer_description,
            sponsor_url, read_type, placement_type, start_seconds, end_seconds, is_network_promo
       from ads where episode_id = $1::text order by start_seconds nulls last, id`,
    [episodeId],
  );
  return rows;
}
