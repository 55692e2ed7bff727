import { describe, expect, it } from 'vitest';
import type { AlertMatchedEventData } from '../../src/matching/streams.ts';
import {
  extractiveSummaryProvider,
  MAX_SUMMARY_SENTENCES,
  MAX_SUMMARY_VARIANTS,
} from '../../src/matching/summary.ts';

/** A match whose one window has each text as a mention line. */
function matchOf(texts: string[], mentionVariants: string[]): AlertMatchedEventData {
  return {
    matchId: 'm-1',
    alertId: 'a-1',
    projectId: 'p-1',
    organizationId: 'o-1',
    kind: 'ENTITY_MENTION',
    entityId: 'e-1',
    entityType: 'PERSON',
    sourceId: 'ep-1',
    sourceType: 'EPISODE',
    detectedAt: '2026-11-20T12:00:00.000Z',
    mentionCount: texts.length,
    mentionVariants,
    relevance: 'on_target',
    roles: [],
    truncated: false,
    isBackfilled: false,
    windows: [
      {
        start_seconds: 0,
        end_seconds: texts.length,
        lines: texts.map((text, i) => ({
          number: i + 1,
          start_seconds: i,
          end_seconds: i + 1,
          text,
          is_mention: true,
        })),
      },
    ],
    episode: { title: 'The Episode', podcast_title: 'The Show' } as AlertMatchedEventData['episode'],
  };
}

describe('the extractive summary provider', () => {
  it('gives the naming bonus for the first MAX_SUMMARY_VARIANTS variants only', async () => {
    const variants = Array.from({ length: MAX_SUMMARY_VARIANTS + 50 }, (_, i) => `name${1000 + i}`);
    const first = variants[0]!;
    const past = variants[MAX_SUMMARY_VARIANTS]!;
    // 3 content words + 3 for the name it would get; 4 content words; 2 content words + 3.
    const namingPast = `We met ${past} here.`;
    const plain = 'Apples bananas cherries dates.';
    const namingFirst = `We met ${first} there.`;
    const summary = await extractiveSummaryProvider.summarize(
      matchOf([namingPast, plain, namingFirst], variants),
      null,
    );
    expect(summary).toBe(`Mentioned on 3 lines of "The Episode" (The Show). “${plain}” “${namingFirst}”`);
  });

  it('weighs the first MAX_SUMMARY_SENTENCES distinct sentences of the mention lines only', async () => {
    // Score 3 each (aaa, bbb, n…), in lines of 100 sentences; a repeat is not counted twice.
    const fillers = Array.from({ length: MAX_SUMMARY_SENTENCES }, (_, i) => `Aaa bbb n${100 + i}.`);
    const within = 'Alpha beta gamma delta epsilon.';
    const beyond = 'Zeta eta theta iota kappa lambda.';
    fillers[500] = within;
    const texts: string[] = [];
    for (let i = 0; i < fillers.length; i += 100) texts.push(fillers.slice(i, i + 100).join(' '));
    texts.push(`${fillers[0]} ${beyond}`);
    const summary = await extractiveSummaryProvider.summarize(matchOf(texts, []), null);
    expect(summary).toContain(within);
    expect(summary).not.toContain('Zeta');
  });
});
