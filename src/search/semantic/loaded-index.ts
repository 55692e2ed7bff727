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
 * embedder's change feed before each query (docs/semantic-search.md, "Vector search"). Every
 * committed change is applied at once; the position only moves past settled rows, so a change
 * whose transaction commits late behind a newer one is still read.
 */
export class LoadedIndex {
  private index: VectorIndex | undefined;
  private position: FeedPosition = FEED_START;
  /** The feed sequence applied per episode: a row read again is not loaded twice. */
  private readonly applied = new Map<string, string>();
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
    let after = this.position;
    let settled = true;
    for (;;) {
      const changed = await changedEpisodes(this.db, after, PAGE);
      const fresh = changed.filter((row) => this.applied.get(row.episode_id) !== row.seq);
      const ours = fresh.filter((row) => row.model === this.model).map((row) => row.episode_id);
      const rows = ours.length ? await embeddingsOf(this.db, this.model, ours) : [];
      const byEpisode = new Map<string, { start: number; lines: number; vector: Float32Array }[]>(
        fresh.map((row) => [row.episode_id, []]),
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
      for (const row of changed) {
        this.applied.set(row.episode_id, row.seq);
        settled &&= row.settled;
        if (settled) this.position = { tx: row.tx, seq: row.seq };
      }
      if (changed.length < PAGE) return;
      const last = changed.at(-1)!;
      after = { tx: last.tx, seq: last.seq };
    }
  }
}
