import type { Queryable } from '../../src/db/db.ts';

/** Vectors travel as float32 little-endian bytes. */
export const toBytes = (vector: Float32Array) =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);

export function fromBytes(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

export interface EmbeddedEpisode {
  episodeId: string;
  passages: { start: number; lines: number; vector: Float32Array }[];
}

/** Replaces the episodes' vectors and records the change in the feed, in the caller's transaction. */
export async function replaceEmbeddings(tx: Queryable, model: string, episodes: readonly EmbeddedEpisode[]) {
  if (episodes.length === 0) return;
  const ids = episodes.map((e) => e.episodeId);
  await tx.query('delete from passage_embeddings where episode_id = any($1::text[])', [ids]);
  const rows = episodes.flatMap((e) => e.passages.map((p) => ({ id: e.episodeId, ...p })));
  for (let i = 0; i < rows.length; i += 5000) {
    const chunk = rows.slice(i, i + 5000);
    await tx.query(
      `insert into passage_embeddings (episode_id, start, lines, model, vector)
       select r.id, r.start, r.lines, $4::text, r.vector
         from unnest($1::text[], $2::int[], $3::int[], $5::bytea[]) as r(id, start, lines, vector)`,
      [
        chunk.map((r) => r.id),
        chunk.map((r) => r.start),
        chunk.map((r) => r.lines),
        model,
        chunk.map((r) => toBytes(r.vector)),
      ],
    );
  }
  await tx.query(
    `insert into passage_embedding_episodes (episode_id, model, passages)
     select * from unnest($1::text[], $2::text[], $3::int[])
     on conflict (episode_id) do update
       set model = excluded.model, passages = excluded.passages, tx = default, seq = default`,
    [ids, ids.map(() => model), episodes.map((e) => e.passages.length)],
  );
}

/** Forgets every vector of a model (a rebuild of the embedder). */
export async function deleteEmbeddings(tx: Queryable, model: string) {
  await tx.query('delete from passage_embeddings where model = $1::text', [model]);
  await tx.query('delete from passage_embedding_episodes where model = $1::text', [model]);
}

/** A position in the change feed: the transaction and sequence of a row. */
export interface FeedPosition {
  tx: string;
  seq: string;
}

export const FEED_START: FeedPosition = { tx: '0', seq: '0' };

export interface FeedRow extends FeedPosition {
  episode_id: string;
  model: string;
  /** Written by a transaction older than every one still open: nothing can commit before it. */
  settled: boolean;
}

/** Episodes (re-)embedded after `after`, in (transaction, sequence) order. */
export async function changedEpisodes(db: Queryable, after: FeedPosition, limit: number): Promise<FeedRow[]> {
  const { rows } = await db.query<FeedRow>(
    `select episode_id, model, tx::text as tx, seq::text as seq,
            tx < pg_snapshot_xmin(pg_current_snapshot()) as settled
       from passage_embedding_episodes
      where (tx, seq) > ($1::xid8, $2::bigint)
      order by tx, seq limit $3::int`,
    [after.tx, after.seq, limit],
  );
  return rows;
}

/** The current vectors of a model for these episodes. */
export async function embeddingsOf(
  db: Queryable,
  model: string,
  episodeIds: readonly string[],
): Promise<{ episode_id: string; start: number; lines: number; vector: Uint8Array }[]> {
  const { rows } = await db.query<{ episode_id: string; start: number; lines: number; vector: Uint8Array }>(
    `select episode_id, start, lines, vector from passage_embeddings
      where episode_id = any($1::text[]) and model = $2::text order by episode_id, start`,
    [episodeIds, model],
  );
  return rows;
}
