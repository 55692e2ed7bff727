import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replaceEmbeddings } from '../../../projections/passage-embeddings/queries.ts';
import type { Db } from '../../../src/db/db.ts';
import { LoadedIndex } from '../../../src/search/semantic/loaded-index.ts';
import { normalize } from '../../../src/search/semantic/provider.ts';
import { createDb } from '../../support/db.ts';

const vector = (x: number, y: number) => normalize(Float32Array.from([x, y]));
const episode = (id: string, x: number, y: number) => ({
  episodeId: id,
  passages: [{ start: 0, lines: 5, vector: vector(x, y) }],
});

describe('the index of one model, loaded from the change feed', () => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await createDb('postgres'));
  });
  afterAll(() => drop?.());

  it('applies a commit at once and still reads a transaction that commits late behind it', async () => {
    const loaded = new LoadedIndex(db, 'm1');
    const ids = async () =>
      ((await loaded.current())?.search(vector(1, 0), 10, -1) ?? []).map((h) => h.episodeId).sort();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => {
      written = resolve;
    });
    // The older transaction writes first and commits last.
    const late = db.transaction(async (tx) => {
      await replaceEmbeddings(tx, 'm1', [episode('ep-late', 1, 0.1)]);
      written();
      await held;
    });
    await wrote;
    await db.transaction((tx) => replaceEmbeddings(tx, 'm1', [episode('ep-early', 1, 0.2)]));
    expect(await ids()).toEqual(['ep-early']);
    release();
    await late;
    expect(await ids()).toEqual(['ep-early', 'ep-late']);
  });

  it('keeps only its own model and drops an episode re-embedded by another', async () => {
    const loaded = new LoadedIndex(db, 'm1');
    expect((await loaded.current())?.size).toBe(2);
    await db.transaction((tx) => replaceEmbeddings(tx, 'm2', [episode('ep-early', 0, 1)]));
    expect((await loaded.current())?.search(vector(1, 0), 10, -1).map((h) => h.episodeId)).toEqual([
      'ep-late',
    ]);
  });
});
