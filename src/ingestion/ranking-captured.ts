import type { ErrorDetail } from '../errors.ts';

/** ranking.captured: one whole chart as captured at one moment (docs/catalog-rankings.md). */
export type ChartSource = 'apple' | 'spotify' | 'youtube';

export interface ChartCategory {
  slug: string;
  name?: string;
  external_id?: string;
  parent_slug?: string | null;
}

export interface Chart {
  source: ChartSource;
  chart_type: string;
  country: string;
  category?: ChartCategory | null;
}

export interface ChartShow {
  name: string;
  description?: string;
  feed_url?: string;
  image_url?: string;
  publisher?: string;
  language?: string;
  content_advisory_rating?: string;
  latest_release_date?: string;
  total_episodes?: number;
  genres?: { external_id?: string; name?: string }[];
}

export interface ChartEntry {
  rank: number;
  podcast_id?: string;
  external_id: string;
  external_url?: string;
  growth_indicator?: string;
  reach_pct?: number;
  view_count?: number;
  weekly_avg_downloads?: number;
  channel_subscriber_count?: number;
  source_updated_at?: string;
  show: ChartShow;
}

export interface RankingCaptured {
  type: 'ranking.captured';
  event_id: string;
  occurred_at: string;
  chart: Chart;
  captured_at: string;
  entries: ChartEntry[];
}

/**
 * A chart's key: source, chart type, country and category slug (empty for the overall chart),
 * joined by '/'. It keys the Kafka message and names the chart's stream.
 */
export const chartKey = (chart: Chart) =>
  [chart.source, chart.chart_type, chart.country, chart.category?.slug ?? ''].join('/');

/** Rules JSON Schema cannot say: a rank, a podcast id and a directory id each appear once in a capture. */
export function rankingRules(prefix: string, event: RankingCaptured): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  const once = (field: 'rank' | 'podcast_id' | 'external_id') => {
    const seen = new Set<unknown>();
    event.entries.forEach((entry, i) => {
      const value = entry[field];
      if (value === undefined) return;
      if (seen.has(value))
        errors.push({
          location: `${prefix}/entries/${i}/${field}`,
          message: 'repeats an earlier entry',
          value,
        });
      seen.add(value);
    });
  };
  once('rank');
  once('podcast_id');
  once('external_id');
  return errors;
}
