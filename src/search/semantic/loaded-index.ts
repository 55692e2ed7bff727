import {
  changedEpisodes,
  embeddingsOf,
  FEED_START,
  type FeedPosition,
  fromBytes,
} from '../../../projections/passage-embeddings/queries.ts';
import type { Queryable } from '../../db/db.ts';
import { VectorIndex } from './vector-index.ts';

/** Episodes read from the change feed per round trip. */
const PAGE = 500;

/**
 * The vectors of one model, kept in this process's memory and brought up to date from the
 * embedder's change feed before each query (docs/semantic-search.md, "Vector search").
 */
export class LoadedIndex {
  private index: VectorIndex | undefined;
  private position: FeedPosition = FEED_START;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    readonly model: string,
  ) {}

  /** The index as of now (undefined while nothing of this model was embedded). */
  async current(): Promise<VectorIndex | undefined> {
    // Queries arriving during a refresh share it.
    this.running ??= this.refresh().finally(() => {
      this.running = undefined;
    });
    await this.running;
    return this.index;
  }

  private async refresh() {
    for (;;) {
      const changed = await changedEpisodes(this.db, this.position, PAGE);
      if (changed.length === 0) return;
      const ours = changed.filter((row) => row.model === this.model).map((row) => row.episode_id);
      const rows = ours.length ? await embeddingsOf(this.db, this.model, ours) : [];
      const byEpisode = new Map<string, { start: number; lines: number; vector: Float32Array }[]>(
        changed.map((row) => [row.episode_id, []]),
      );
      for (const row of rows)
        byEpisode
          .get(row.episode_id)
          ?.push({ start: row.start, lines: row.lines, vector: fromBytes(row.vector) });
      for (const [id, passages] of byEpisode) {
        const first = passages[0];
        if (this.index === undefined && first !== undefined)
          this.index = new VectorIndex(first.vector.length);
        this.index?.replaceEpisode(id, passages);
      }
      const last = changed.at(-1)!;
      this.position = { tx: last.tx, seq: last.seq };
      if (changed.length < PAGE) return;
    }
  }
}
