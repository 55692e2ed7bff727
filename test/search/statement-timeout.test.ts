import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/errors.ts';
import { builtinProvider } from '../../src/search/semantic/word-vectors.ts';
import { boundedReads } from '../../src/search/statement-timeout.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { createTestDb } from '../support/db.ts';
import { searchHarness } from './support.ts';

// No search statement holds a connection past the statement timeout (docs/search.md, "Statement
// timeout"). An episode of very repetitive lines makes PostgreSQL's ts_rank slow: a search that
// takes far more than a millisecond.
const REPEATED = 'sa al ay wa '.repeat(60);
const SEARCH = '/v1/podcasts/episodes/search';
const SLOW = { keyword_search: 'sa al ay wa' };

type Harness = Awaited<ReturnType<typeof searchHarness>>;

/** A harness holding one episode of `lines` repetitive lines, closed after `use`. */
async function withRepetitiveEpisode(
  options: { engine?: 'postgres' | 'pglite'; semantic?: boolean; timeoutMs: number; lines?: number },
  use: (h: Harness) => Promise<void>,
) {
  const h = await searchHarness(
    options.engine ?? 'postgres',
    options.semantic ? builtinProvider : undefined,
    {
      statementTimeoutMs: options.timeoutMs,
    },
  );
  try {
    await h.ingest([
      episodeEvent({ id: 'ep-rep', lines: Array.from({ length: options.lines ?? 400 }, () => REPEATED) }),
    ]);
    await use(h);
  } finally {
    await h.close();
  }
}

function expectQueryTimeout(response: Awaited<ReturnType<Harness['get']>>) {
  expect(response.statusCode).toBe(503);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json()).toMatchObject({ status: 503, error_code: 'query_timeout' });
}

describe('the search statement timeout (postgres)', () => {
  it('stops a statement past the limit with 503 query_timeout, and the pool keeps working', async () => {
    const { db, drop } = await createTestDb({ max: 2 });
    try {
      const bounded = boundedReads(db, 50);
      const error = await bounded.query('select pg_sleep(2)').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ status: 503, errorCode: 'query_timeout' });
      expect((await bounded.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
      const { rows } = await db.query<{ timeout: string }>(
        "select current_setting('statement_timeout') as timeout",
      );
      expect(rows[0]?.timeout).toBe('0');
    } finally {
      await drop();
    }
  });

  it('answers a search that passes a tiny limit with problem+json 503 query_timeout', () =>
    withRepetitiveEpisode({ timeoutMs: 1 }, async (h) => expectQueryTimeout(await h.get(SEARCH, SLOW))));

  it('bounds the reads of a hybrid search (its semantic part included) by the same limit', () =>
    withRepetitiveEpisode({ semantic: true, timeoutMs: 1 }, async (h) =>
      // The hybrid's keyword ranking is the slow statement.
      expectQueryTimeout(await h.get(SEARCH, { semantic_search: SLOW.keyword_search, ...SLOW })),
    ));

  it('sets no limit at 0: the same search answers', () =>
    withRepetitiveEpisode({ timeoutMs: 0 }, async (h) => {
      const { status, body } = await h.json(SEARCH, SLOW);
      expect(status).toBe(200);
      expect(body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-rep']);
    }));
});

describe('the search statement timeout on embedded PGlite', () => {
  it('sets no limit (one process, one connection): a search past the setting answers', () =>
    withRepetitiveEpisode({ engine: 'pglite', timeoutMs: 1, lines: 100 }, async (h) => {
      const started = Date.now();
      const { status, body } = await h.json(SEARCH, SLOW);
      expect(Date.now() - started).toBeGreaterThan(1);
      expect(status).toBe(200);
      expect(body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-rep']);
    }));
});
