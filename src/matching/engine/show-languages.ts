import type { RecordedEvent } from '../../eventstore/port.ts';
import type { PodcastUpserted } from '../../ingestion/events.ts';

/** The events that tell the realtime matcher a show's language. */
export const SHOW_LANGUAGE_EVENT_TYPES: readonly string[] = ['PodcastUpserted'];

export interface ShowLanguage {
  language: string;
  /** occurred_at of the version it comes from, epoch ms. */
  at: number;
}

/**
 * The shows' languages as the realtime matcher knows them at its place in the feed: from the
 * podcast.upserted events it has applied, in store order, the later occurred_at winning (equal:
 * the later in store order), an event without a language changing nothing, as in the podcasts
 * read model. Only podcast.upserted counts, so a restart rebuilds it without reading episodes
 * (docs/matching-pipeline.md, "A show's language"), from the matcher's snapshot and the events
 * after it ("Restart").
 */
export class ShowLanguages {
  private readonly shows = new Map<string, ShowLanguage>();

  apply(event: RecordedEvent): void {
    if (event.type !== 'PodcastUpserted') return;
    const { podcast, occurred_at } = event.data as PodcastUpserted;
    if (podcast.language === undefined) return;
    const at = Date.parse(occurred_at);
    const held = this.shows.get(podcast.id);
    if (held !== undefined && held.at > at) return;
    this.shows.set(podcast.id, { language: podcast.language, at });
  }

  of(podcastId: string): string | undefined {
    return this.shows.get(podcastId)?.language;
  }

  /** What is held for the show: its language and that version's occurred_at (epoch ms). */
  entry(podcastId: string): ShowLanguage | undefined {
    return this.shows.get(podcastId);
  }

  entries(): IterableIterator<[string, ShowLanguage]> {
    return this.shows.entries();
  }

  /** Puts back an entry read from a snapshot. */
  restore(podcastId: string, entry: ShowLanguage): void {
    this.shows.set(podcastId, entry);
  }
}
