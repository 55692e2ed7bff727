import { passagesOf } from '../../projections/passage-embeddings/passages.ts';
import {
  deleteEmbeddings,
  type EmbeddedEpisode,
  replaceEmbeddings,
} from '../../projections/passage-embeddings/queries.ts';
import { storedLines } from '../../projections/transcripts/projection.ts';
import {
  advanceEpisodeVersions,
  newestVersions,
  resetEpisodeVersions,
} from '../../src/catalog/episode-versions.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import type { EmbeddingProvider } from '../../src/search/semantic/provider.ts';
import type { TransactionalSubscriber } from '../../src/subscriptions/subscriber.ts';

/** Texts per provider call. */
const EMBED_BATCH = 64;

/** The subscription name: one per model, so a new model starts from the first event and re-embeds all. */
export const embedderName = (model: string) => `embedder:${model}`;

const versionKey = (e: EpisodeTranscribed) => `${e.episode.id}\u0000${e.occurred_at}`;

/**
 * Embeds every transcript's passages (docs/semantic-search.md, "The embedder"). The provider is
 * called before the transaction (`prepare`, repeatable: embeddings are a function of the text);
 * the vectors and the checkpoint are then written in one transaction, replacing the episode's
 * rows, so a batch handled twice leaves the same rows. An event whose embedding keeps failing is
 * parked by the runtime; an unreachable provider is waited out.
 */
export function embedder(provider: EmbeddingProvider): TransactionalSubscriber<Map<string, EmbeddedEpisode>> {
  const name = embedderName(provider.model);
  return {
    mode: 'transactional',
    name,
    eventTypes: ['EpisodeTranscribed'],
    batchSize: 20,
    async prepare(events) {
      const prepared = new Map<string, EmbeddedEpisode>();
      for (const episode of newestVersions(events).values()) {
        const passages = passagesOf(storedLines(episode));
        const vectors: Float32Array[] = [];
        for (let i = 0; i < passages.length; i += EMBED_BATCH)
          vectors.push(...(await provider.embed(passages.slice(i, i + EMBED_BATCH).map((p) => p.text))));
        prepared.set(versionKey(episode), {
          episodeId: episode.episode.id,
          passages: passages.map((p, i) => ({ start: p.start, lines: p.lines, vector: vectors[i]! })),
        });
      }
      return prepared;
    },
    async handle(tx, events, prepared) {
      const episodes = await advanceEpisodeVersions(tx, name, events);
      await replaceEmbeddings(
        tx,
        provider.model,
        episodes.flatMap((e) => prepared.get(versionKey(e)) ?? []),
      );
    },
    async reset(tx) {
      await deleteEmbeddings(tx, provider.model);
      await resetEpisodeVersions(tx, name);
    },
  };
}
