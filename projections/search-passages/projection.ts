import { advanceEpisodeVersions, resetEpisodeVersions } from '../../src/catalog/episode-versions.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';
import { linesInOrder } from '../transcripts/projection.ts';
import { textRowVectors, textRowVectorsBinary } from './passages.ts';

const NAME = 'search_passage_rows';
// Rows per insert statement (about 2.5 episodes of 2,000 lines): large enough to amortise the
// round trip, small enough that PostgreSQL stores one while the next is built.
const CHUNK = 250;

/** The producer's mentions per entity, counted as the matcher counts them (docs/matching.md). */
function producerMentions(event: EpisodeTranscribed) {
  const byEntity = new Map<string, { lines: Set<number>; withoutLines: number; variants: Set<string> }>();
  for (const mention of event.mentions ?? []) {
    let entry = byEntity.get(mention.entity_id);
    if (entry === undefined) {
      entry = { lines: new Set(), withoutLines: 0, variants: new Set() };
      byEntity.set(mention.entity_id, entry);
    }
    if (!mention.lines?.length) entry.withoutLines++;
    for (const line of mention.lines ?? []) entry.lines.add(line);
    for (const variant of mention.variants ?? []) entry.variants.add(variant);
  }
  return [...byEntity].map(([entityId, e]) => ({
    episode_id: event.episode.id,
    entity_id: entityId,
    mention_count: e.lines.size + e.withoutLines,
    lines: [...e.lines].sort((a, b) => a - b),
    variants: [...e.variants],
  }));
}

const TSVECTOR_OID = 3614;

/** A one-dimensional tsvector[] in PostgreSQL's binary form (array_recv), of binary tsvectors. */
function tsvectorArray(items: readonly Buffer[]): Buffer {
  let size = 20;
  for (const item of items) size += 4 + item.length;
  const out = Buffer.allocUnsafe(size);
  // Dimensions, no nulls, the element type, then the one dimension's length and lower bound.
  let at = out.writeInt32BE(1, 0);
  at = out.writeInt32BE(0, at);
  at = out.writeInt32BE(TSVECTOR_OID, at);
  at = out.writeInt32BE(items.length, at);
  at = out.writeInt32BE(1, at);
  for (const item of items) {
    at = out.writeInt32BE(item.length, at);
    at += item.copy(out, at);
  }
  return out;
}

/**
 * Inserts the episodes' rows, each statement running while the next one's rows are built
 * (docs/search.md, "Where the targets stand"). The connection runs one statement at a time: the
 * next is sent when the previous has ended, and a failure returns only once none runs, so the
 * rollback comes after it.
 */
async function insertRows(tx: Queryable, episodes: readonly EpisodeTranscribed[]) {
  // PostgreSQL takes the rows' words in binary form; PGlite sends every parameter as text.
  const binary = tx.kind === 'postgres';
  const build = binary ? textRowVectorsBinary : textRowVectors;
  let ids: string[] = [];
  let starts: number[] = [];
  let words: (string | Buffer)[] = [];
  let inFlight: Promise<unknown> | undefined;
  const flush = async () => {
    await inFlight;
    if (ids.length === 0) return;
    inFlight = tx.query(
      `insert into search_passage_rows (episode_id, start, words)
       select * from unnest($1::text[], $2::int[], $3::tsvector[])`,
      [ids, starts, binary ? tsvectorArray(words as Buffer[]) : words],
    );
    // Awaited on the next flush or below; a failure before then must not count as unhandled.
    inFlight.catch(() => {});
    ids = [];
    starts = [];
    words = [];
  };
  try {
    for (const event of episodes) {
      const lines = linesInOrder(event);
      for (const row of build(lines.map((line) => line.text))) {
        ids.push(event.episode.id);
        starts.push(row.start);
        words.push(row.words);
        if (ids.length === CHUNK) await flush();
      }
    }
    await flush();
    await inFlight;
  } finally {
    await inFlight?.catch(() => {});
  }
}

/** The passage index and the producer's mentions of each transcribed episode; a re-sent episode replaces its rows. */
export const searchPassagesProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    const ids = episodes.map((e) => e.episode.id);
    await tx.query('delete from search_passage_rows where episode_id = any($1::text[])', [ids]);
    await tx.query('delete from search_mentions where episode_id = any($1::text[])', [ids]);
    await insertRows(tx, episodes);
    const mentions = episodes.flatMap(producerMentions);
    if (mentions.length)
      await tx.query(
        `insert into search_mentions (episode_id, entity_id, mention_count, lines, variants)
         select r.episode_id, r.entity_id, r.mention_count,
                array(select jsonb_array_elements_text(r.lines)::int),
                array(select jsonb_array_elements_text(r.variants))
           from jsonb_to_recordset($1::jsonb)
             as r(episode_id text, entity_id text, mention_count int, lines jsonb, variants jsonb)
         on conflict (entity_id, episode_id) do nothing`,
        [JSON.stringify(mentions)],
      );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from search_passage_rows');
    await tx.query('delete from search_mentions');
    await resetEpisodeVersions(tx, NAME);
  },
};
