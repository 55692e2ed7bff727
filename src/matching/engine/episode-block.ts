import type { EpisodeTranscribed } from '../../ingestion/events.ts';
import type { MatchEpisodeBlock } from '../streams.ts';
import { popularityBadge } from './popularity.ts';

/** The episode block of a match, from the episode as ingested. */
export function matchEpisodeBlock({
  podcast,
  episode,
}: Pick<EpisodeTranscribed, 'podcast' | 'episode'>): MatchEpisodeBlock {
  const block: MatchEpisodeBlock = {
    podcast_id: podcast.id,
    podcast_title: podcast.title,
    title: episode.title,
    duration_seconds: episode.duration_seconds,
    published_at: isoOr(episode.published_at),
  };
  const optional: Partial<MatchEpisodeBlock> = {
    slug: episode.slug,
    podcast_slug: podcast.slug,
    audio_url: episode.audio_url,
    apple_podcasts_url: episode.apple_podcasts_url ?? podcast.apple_podcasts_url,
    image_url: episode.image_url,
    podcast_image_url: podcast.image_url,
    explicit: episode.explicit ?? podcast.explicit,
    podcast_bias: podcast.bias,
    podcast_popularity: podcast.popularity,
    podcast_popularity_badge: popularityBadge(podcast.popularity),
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (block as unknown as Record<string, unknown>)[key] = value;
  }
  return block;
}

function isoOr(timestamp: string): string {
  const time = Date.parse(timestamp);
  return Number.isNaN(time) ? timestamp : new Date(time).toISOString();
}
