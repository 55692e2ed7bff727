import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realtimeMatcher } from '../../../consumers/matcher/realtime.ts';
import { summarizer } from '../../../consumers/summarizer/summarizer.ts';
import { matchId } from '../../../src/matching/engine/match-id.ts';
import { matchStream } from '../../../src/matching/streams.ts';
import { extractiveSummaryProvider, type SummaryProvider } from '../../../src/matching/summary.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { type PipelineFixture, pipelineFixture, runUntilCaughtUp } from '../../matching/support.ts';

describe('the summarizer', () => {
  let f: PipelineFixture;

  beforeAll(async () => {
    f = await pipelineFixture();
    await f.entity('ent-nvidia', 'NVIDIA');
  });
  afterAll(() => f.close());

  it('appends one extractive summary per match, and nothing more when run again', async () => {
    const alert = await f.createAlert('ent-nvidia');
    const episode = episodeEvent({
      lines: [
        'Welcome to the show.',
        'Yeah.',
        'NVIDIA announced a new datacenter accelerator with twice the memory bandwidth. Wow.',
        'So, okay.',
        'Analysts expect NVIDIA revenue to grow strongly next quarter.',
        'Bye.',
      ],
    });
    await f.ingest([episode]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    const run = () =>
      runUntilCaughtUp(f.db, f.store, summarizer({ ...f.deps, provider: extractiveSummaryProvider }));
    await run();
    await f.db.query(`update projection_checkpoints set position = '0/0' where name = 'consumer:summarizer'`);
    await run();

    const events = await f.store.readStream(matchStream(matchId(alert.id, episode.episode.id)));
    expect(events.map((event) => event.type)).toEqual(['AlertMatched', 'AlertMatchSummarized']);
    const { summary } = events[1]!.data as { summary: string };
    expect(summary).toBe(
      `Mentioned on 2 lines of "${episode.episode.title}" (Chip Talk). ` +
        '“NVIDIA announced a new datacenter accelerator with twice the memory bandwidth.” ' +
        '“Analysts expect NVIDIA revenue to grow strongly next quarter.”',
    );
    expect(events[1]!.metadata.causationId).toBe(events[0]!.id);
  });

  it('leaves a match without a summary when the provider fails, and goes on with the next', async () => {
    await f.entity('ent-amd', 'AMD');
    const alert = await f.createAlert('ent-amd');
    const failing = episodeEvent({ lines: ['AMD fails here.'] });
    const working = episodeEvent({ lines: ['AMD works here.'] });
    await f.ingest([failing, working]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    const provider: SummaryProvider = {
      name: 'flaky',
      async summarize(match) {
        if (match.sourceId === failing.episode.id) throw new Error('model unavailable');
        return `summary of ${match.sourceId}`;
      },
    };
    await runUntilCaughtUp(f.db, f.store, summarizer({ ...f.deps, provider }));

    const typesOf = async (episodeId: string) =>
      (await f.store.readStream(matchStream(matchId(alert.id, episodeId)))).map((event) => event.type);
    expect(await typesOf(failing.episode.id)).toEqual(['AlertMatched']);
    expect(await typesOf(working.episode.id)).toEqual(['AlertMatched', 'AlertMatchSummarized']);
  });
});
