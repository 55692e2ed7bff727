import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';

// Three episodes of 2,000 lines are 300 rows: two inserts (250 and 50 rows), the next rows built
// while the first runs (docs/search.md, "Where the targets stand").
const lines = Array.from({ length: 2000 }, (_, k) => `line ${k} of the wombat fund`);
const batch = (ids: string[]): RecordedEvent[] =>
  ids.map((id, n) => ({
    id: `e-${id}`,
    streamId: `episode-${id}`,
    revision: 0,
    position: `${n + 1}`,
    type: 'EpisodeTranscribed',
    // ep-broken's rows cannot be built (a line without text): a failure while an insert runs.
    data:
      id === 'ep-broken'
        ? episodeEvent({ id, lines: [...lines.slice(1), null as unknown as string] })
        : episodeEvent({ id, lines }),
    metadata: {},
    recordedAt: new Date(),
  }));

/**
 * The transaction's connection as the projection sees it, counting the queries it sends while
 * another of them runs (a connection runs one at a time; pg 9 refuses it) and those still
 * running when the projection has settled (a rollback would run before them).
 */
function watched(tx: Queryable) {
  let running = 0;
  const seen = { overlapping: 0, running: 0 };
  const track =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
    async (...args: A) => {
      if (running > 0) seen.overlapping++;
      running++;
      try {
        return await run(...args);
      } finally {
        running--;
      }
    };
  const q: Queryable = {
    ...(tx.kind ? { kind: tx.kind } : {}),
    query: track(tx.query.bind(tx)) as Queryable['query'],
    exec: track(tx.exec.bind(tx)),
  };
  return { q, settled: () => ({ ...seen, running }) };
}

describe.each(ENGINES)('passage inserts refused mid-batch on %s', (engine) => {
  let made: Awaited<ReturnType<typeof createDb>>;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(async () => {
    made = await createDb(engine);
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await made?.drop();
  });

  const counts = async () =>
    (
      await made.db.query<{ rows: number; distinct: number; versions: number }>(
        `select count(*)::int as rows, count(distinct (episode_id, start))::int as distinct,
                (select count(*)::int from episode_versions where projection = 'search_passage_rows') as versions
           from search_passage_rows`,
      )
    ).rows[0]!;

  const apply = (events: RecordedEvent[]) =>
    made.db.transaction(async (tx) => {
      const { q, settled } = watched(tx);
      const result = await searchPassagesProjection.apply(q, events).then(
        () => ({ error: undefined }),
        (error: unknown) => ({ error }),
      );
      expect(settled()).toEqual({ overlapping: 0, running: 0 });
      if (result.error) throw result.error;
    });

  it.each([
    ['the first insert, while the next rows are built', ['ep-a', 'ep-bad', 'ep-c'], /refused row/],
    ['the last insert', ['ep-a', 'ep-c', 'ep-bad'], /refused row/],
    ['building rows, while the first insert runs', ['ep-a', 'ep-c', 'ep-d', 'ep-broken'], TypeError],
  ])('rolls the batch back when %s fails, and its retry writes each row once', async (_, ids, failure) => {
    await made.db.exec(
      `create or replace function refuse_row() returns trigger language plpgsql as $$
       begin
         if new.episode_id = 'ep-bad' then raise exception 'refused row'; end if;
         return new;
       end $$;
       create trigger refuse_row before insert on search_passage_rows for each row execute function refuse_row();`,
    );
    await expect(apply(batch(ids))).rejects.toThrow(failure);
    expect(await counts()).toEqual({ rows: 0, distinct: 0, versions: 0 });
    await made.db.exec('drop trigger refuse_row on search_passage_rows');
    const events = batch(['ep-a', 'ep-bad', 'ep-c']);
    await apply(events);
    // Delivered again (at least once): the episodes' rows are replaced, nothing doubled.
    await apply(events);
    expect(await counts()).toEqual({ rows: 300, distinct: 300, versions: 3 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(unhandled).toEqual([]);
    await made.db.transaction((tx) => searchPassagesProjection.reset(tx));
  });
});
