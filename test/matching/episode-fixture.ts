import type { EpisodeTranscribed, TranscriptLine } from '../../src/ingestion/events.ts';
import type { WatchedAlert } from '../../src/matching/types.ts';

/** A transcript whose line n (1-based) starts at 10·(n−1) s and lasts 8 s. */
export function transcriptLines(
  texts: readonly string[],
  speakerOf?: (n: number) => string,
): TranscriptLine[] {
  return texts.map((text, i) => {
    const line: TranscriptLine = { number: i + 1, start_seconds: i * 10, end_seconds: i * 10 + 8, text };
    const speakerId = speakerOf?.(i + 1);
    if (speakerId !== undefined) line.speaker_id = speakerId;
    return line;
  });
}

export function fillerLines(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `Nothing to see on line ${i + 1}.`);
}

export function episodeWith(
  overrides: Partial<EpisodeTranscribed> & { lines?: TranscriptLine[] } = {},
): EpisodeTranscribed {
  const { lines, ...rest } = overrides;
  return {
    type: 'episode.transcribed',
    event_id: 'evt-1',
    occurred_at: '2026-11-20T10:00:00Z',
    podcast: { id: 'pod-1', title: 'The Show', language: 'en', popularity: 0.97 },
    episode: {
      id: 'ep-1',
      title: 'Episode one',
      published_at: '2026-11-20T09:00:00Z',
      duration_seconds: 3600,
      language: 'en-US',
    },
    speakers: [
      { id: 'host', name: 'Hannah Host', role: 'HOST' },
      { id: 'guest', name: 'Gary Guest', role: 'GUEST' },
    ],
    transcript: { language: 'en', lines: lines ?? transcriptLines(fillerLines(20)) },
    ...rest,
  };
}

export function watched(overrides: Partial<WatchedAlert> = {}): WatchedAlert {
  return {
    alertId: 'alert-1',
    projectId: 'proj-1',
    organizationId: 'org-1',
    kind: 'ENTITY_MENTION',
    entityId: 'ent-1',
    entityType: 'COMPANY',
    filters: {},
    ...overrides,
  };
}
