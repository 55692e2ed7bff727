/**
 * The catalog's producer events and the optional blocks it adds to episode.transcribed
 * (docs/catalog.md, "Ingestion"). Field names are the wire names.
 */

/** A topic as producers send it; ancestry is the slash-separated slug path from the root. */
export interface CatalogTopic {
  id: string;
  name: string;
  slug?: string;
  ancestry?: string;
}

export interface EpisodeVideo {
  url: string;
  platform?: string;
  mime_type?: string;
  duration_seconds?: number;
  width?: number;
  height?: number;
}

/** How an ad is read: an ad's `read_type`, and an ad segment's. */
export type ReadType = 'HOST_READ' | 'PRE_RECORDED';

export interface EpisodeAd {
  id: string;
  sponsor: { id?: string; name: string; company_id?: string };
  product?: string;
  offer_description?: string;
  sponsor_url?: string;
  read_type?: ReadType;
  placement_type?: 'PRE_ROLL' | 'MID_ROLL' | 'POST_ROLL';
  start_seconds?: number;
  end_seconds?: number;
  is_network_promo?: boolean;
}

export type SuitabilityTier = 'SAFE' | 'LIMITED' | 'SENSITIVE' | 'UNSAFE';

export interface PodcastUpserted {
  type: 'podcast.upserted';
  event_id: string;
  occurred_at: string;
  podcast: {
    id: string;
    title: string;
    slug?: string;
    description?: string;
    url?: string;
    image_url?: string;
    language?: string;
    explicit?: boolean;
    popularity?: number;
    bias?: string;
    political_context?: string;
    suitability_tier?: SuitabilityTier;
    has_video?: boolean;
    feed_url?: string;
    directory_ids?: Record<string, string>;
    publisher?: { id?: string; name?: string; slug?: string };
    topics?: CatalogTopic[];
  };
}
