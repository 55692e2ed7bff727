import { describe, expect, it } from 'vitest';
import type { EpisodeTranscribed } from '../../../src/ingestion/events.ts';
import { matchEpisode } from '../../../src/matching/engine/match-episode.ts';
import { matchId } from '../../../src/matching/engine/match-id.ts';
import { Watchlist } from '../../../src/matching/engine/watchlist.ts';
import type { WatchedAlert } from '../../../src/matching/types.ts';
import { episodeWith, fillerLines, transcriptLines, watched } from '../episode-fixture.ts';

const NOW = new Date('2026-11-20T12:00:00Z');

function watchlistOf(
  entities: { id: string; name: string; aliases?: string[] }[],
  alerts: WatchedAlert[],
): Watchlist {
  const watchlist = new Watchlist();
  for (const entity of entities) watchlist.upsertEntity(entity);
  for (const alert of alerts) watchlist.putAlert(alert);
  return watchlist;
}

function run(watchlist: Watchlist, episode: EpisodeTranscribed, isBackfilled?: boolean) {
  return matchEpisode(episode, {
    index: watchlist.index,
    detector: watchlist.detector,
    now: NOW,
    ...(isBackfilled === undefined ? {} : { isBackfilled }),
  });
}

/** A 20-line transcript with the given texts on the given line numbers. */
function linesWith(texts: Record<number, string>, speakerOf?: (n: number) => string) {
  const texts20 = fillerLines(20).map((filler, i) => texts[i + 1] ?? filler);
  return transcriptLines(texts20, speakerOf);
}

const nvidia = { id: 'nvda', name: 'NVIDIA', aliases: ['Nvidia Corporation'] };
const jensen = { id: 'jensen', name: 'Jensen Huang', aliases: ['Jensen'] };

describe('matchEpisode: ENTITY_MENTION', () => {
  it('matches an entity mentioned in the dialogue, with count, variants, roles and windows', () => {
    const watchlist = watchlistOf([nvidia], [watched({ entityId: 'nvda' })]);
    const lines = linesWith(
      { 3: 'We talked about Nvidia today.', 10: 'NVIDIA CORPORATION and nvidia again' },
      (n) => (n === 3 ? 'host' : 'guest'),
    );
    const [match, ...others] = run(watchlist, episodeWith({ lines }));
    expect(others).toEqual([]);
    expect(match).toMatchObject({
      matchId: matchId('alert-1', 'ep-1'),
      alertId: 'alert-1',
      projectId: 'proj-1',
      kind: 'ENTITY_MENTION',
      entityId: 'nvda',
      entityType: 'COMPANY',
      sourceId: 'ep-1',
      sourceType: 'EPISODE',
      detectedAt: '2026-11-20T12:00:00.000Z',
      mentionCount: 2,
      mentionVariants: ['Nvidia', 'NVIDIA', 'NVIDIA CORPORATION', 'nvidia'],
      relevance: 'incidental',
      roles: ['HOST', 'GUEST'],
      truncated: false,
      isBackfilled: false,
    });
    expect(match!.windows.map((w) => w.lines.map((line) => line.number))).toEqual([
      [1, 2, 3, 4, 5],
      [8, 9, 10, 11, 12],
    ]);
  });

  it('does not match a name inside another word', () => {
    const watchlist = watchlistOf([{ id: 'apple', name: 'Apple' }], [watched({ entityId: 'apple' })]);
    expect(run(watchlist, episodeWith({ lines: linesWith({ 4: 'Pineapple and snapple' }) }))).toEqual([]);
  });

  it('matches names whatever their accents and case', () => {
    const watchlist = watchlistOf(
      [
        { id: 'zoe', name: 'Zoë Kravitz' },
        { id: 'sg', name: 'Société Générale' },
      ],
      [watched({ alertId: 'a-zoe', entityId: 'zoe' }), watched({ alertId: 'a-sg', entityId: 'sg' })],
    );
    const results = run(
      watchlist,
      episodeWith({ lines: linesWith({ 2: 'zoe kravitz', 5: 'SOCIETE GENERALE' }) }),
    );
    expect(results.map((r) => [r.alertId, r.mentionVariants])).toEqual([
      ['a-zoe', ['zoe kravitz']],
      ['a-sg', ['SOCIETE GENERALE']],
    ]);
  });

  it('matches multi-word names and aliases', () => {
    const watchlist = watchlistOf([jensen], [watched({ entityId: 'jensen', entityType: 'PERSON' })]);
    const [match] = run(
      watchlist,
      episodeWith({ lines: linesWith({ 6: 'Jensen Huang said', 15: 'and Jensen left' }) }),
    );
    expect(match?.mentionCount).toBe(2);
    expect(match?.mentionVariants).toEqual(['Jensen', 'Jensen Huang']);
  });

  it('does not match an entity that only speaks', () => {
    const watchlist = watchlistOf([jensen], [watched({ entityId: 'jensen' })]);
    const episode = episodeWith({
      speakers: [{ id: 'g', name: 'J. H.', role: 'GUEST', entity_id: 'jensen' }],
    });
    expect(run(watchlist, episode)).toEqual([]);
  });

  it("uses the producer's mentions instead of detection for that entity", () => {
    const watchlist = watchlistOf(
      [nvidia, jensen],
      [
        watched({ alertId: 'a-nvda', entityId: 'nvda' }),
        watched({ alertId: 'a-jensen', entityId: 'jensen' }),
      ],
    );
    const episode = episodeWith({
      lines: linesWith({ 2: 'Nvidia and Jensen', 12: 'the green team' }),
      mentions: [{ entity_id: 'nvda', lines: [12], variants: ['the green team'], relevance: 'on_target' }],
    });
    const byAlert = new Map(run(watchlist, episode).map((r) => [r.alertId, r]));
    expect(byAlert.get('a-nvda')).toMatchObject({
      mentionCount: 1,
      mentionVariants: ['the green team'],
      relevance: 'on_target',
    });
    expect(byAlert.get('a-nvda')!.windows[0]!.lines.find((line) => line.is_mention)?.number).toBe(12);
    expect(byAlert.get('a-jensen')).toMatchObject({ mentionCount: 1, mentionVariants: ['Jensen'] });
  });

  it('counts producer mentions by distinct line and matches entities the detector does not know', () => {
    const watchlist = watchlistOf([], [watched({ entityId: 'kg-ai' })]);
    const episode = episodeWith({
      mentions: [
        { entity_id: 'kg-ai', lines: [3, 4], variants: ['AI'] },
        { entity_id: 'kg-ai', lines: [4, 9], variants: ['A.I.', 'AI'] },
      ],
    });
    const [match] = run(watchlist, episode);
    expect(match).toMatchObject({ mentionCount: 3, mentionVariants: ['AI', 'A.I.'], relevance: 'on_target' });
  });

  it('gives the same match id when the episode is delivered again', () => {
    const watchlist = watchlistOf([nvidia], [watched({ entityId: 'nvda' })]);
    const episode = episodeWith({ lines: linesWith({ 3: 'Nvidia' }) });
    const first = run(watchlist, episode);
    const again = run(watchlist, { ...episode, event_id: 'evt-2' });
    expect(again.map((r) => r.matchId)).toEqual(first.map((r) => r.matchId));
  });

  it('matches every active alert on the entity and none that was paused', () => {
    const watchlist = watchlistOf(
      [nvidia],
      [
        watched({ alertId: 'a1', entityId: 'nvda' }),
        watched({ alertId: 'a2', entityId: 'nvda', projectId: 'p2' }),
      ],
    );
    const episode = episodeWith({ lines: linesWith({ 3: 'Nvidia' }) });
    expect(run(watchlist, episode).map((r) => [r.alertId, r.projectId])).toEqual([
      ['a1', 'proj-1'],
      ['a2', 'p2'],
    ]);
    watchlist.removeAlert('a1');
    expect(run(watchlist, episode).map((r) => r.alertId)).toEqual(['a2']);
  });

  it('marks backfilled matches', () => {
    const watchlist = watchlistOf([nvidia], [watched({ entityId: 'nvda' })]);
    const [match] = run(watchlist, episodeWith({ lines: linesWith({ 3: 'Nvidia' }) }), true);
    expect(match?.isBackfilled).toBe(true);
  });

  it('marks a match with more than 50 windows as truncated', () => {
    const texts = Array.from({ length: 600 }, (_, i) => (i % 10 === 0 ? 'Nvidia again' : 'filler'));
    const watchlist = watchlistOf([nvidia], [watched({ entityId: 'nvda' })]);
    const [match] = run(watchlist, episodeWith({ lines: transcriptLines(texts) }));
    expect([match?.mentionCount, match?.windows.length, match?.truncated]).toEqual([60, 50, true]);
  });
});

describe('matchEpisode: PODCAST_SPEAKER', () => {
  const speakerAlert = (filters: WatchedAlert['filters'] = {}) =>
    watched({ kind: 'PODCAST_SPEAKER', entityId: 'jensen', entityType: 'PERSON', filters });
  const guestEpisode = (role: string) =>
    episodeWith({
      speakers: [
        { id: 'host', name: 'Hannah Host', role: 'HOST' },
        { id: 'jh', name: 'Jensen Huang', role, entity_id: 'jensen' },
      ],
      lines: transcriptLines(fillerLines(20), (n) => (n === 5 || n === 6 || n === 18 ? 'jh' : 'host')),
    });

  it("matches a linked non-host speaker, with that speaker's lines as windows", () => {
    const watchlist = watchlistOf([jensen], [speakerAlert()]);
    const [match, ...others] = run(watchlist, guestEpisode('GUEST'));
    expect(others).toEqual([]);
    expect(match).toMatchObject({
      kind: 'PODCAST_SPEAKER',
      mentionCount: 3,
      mentionVariants: ['Jensen Huang'],
      relevance: 'on_target',
      roles: ['GUEST'],
    });
    expect(
      match!.windows.map((w) => w.lines.filter((line) => line.is_mention).map((line) => line.number)),
    ).toEqual([[5, 6], [18]]);
  });

  it('does not match a host or co-host', () => {
    const watchlist = watchlistOf([jensen], [speakerAlert()]);
    expect(run(watchlist, guestEpisode('HOST'))).toEqual([]);
    expect(run(watchlist, guestEpisode('co_host'))).toEqual([]);
  });

  it('does not match a mere mention of the entity', () => {
    const watchlist = watchlistOf([jensen], [speakerAlert()]);
    expect(run(watchlist, episodeWith({ lines: linesWith({ 2: 'Jensen Huang is great' }) }))).toEqual([]);
  });

  it('keeps only speakers whose role is in speaker_roles', () => {
    const watchlist = watchlistOf([jensen], [speakerAlert({ speakerRoles: ['PANELIST', 'CALLER'] })]);
    expect(run(watchlist, guestEpisode('GUEST'))).toEqual([]);
    expect(run(watchlist, guestEpisode('panelist')).map((r) => r.roles)).toEqual([['PANELIST']]);
  });

  it('works out the evidence once for the alerts on one speaker with the same speaker_roles', () => {
    const alerts = [
      ...['a', 'b', 'c'].map((id) => ({ ...speakerAlert(), alertId: id })),
      ...['d', 'e'].map((id) => ({ ...speakerAlert({ speakerRoles: ['GUEST', 'PANELIST'] }), alertId: id })),
      { ...speakerAlert({ speakerRoles: ['PANELIST', 'GUEST', 'GUEST'] }), alertId: 'f' },
    ];
    const matches = run(watchlistOf([jensen], alerts), guestEpisode('GUEST'));
    const windowsOf = (alertId: string) => matches.find((m) => m.alertId === alertId)!.windows;
    expect(matches).toHaveLength(6);
    expect(windowsOf('b')).toBe(windowsOf('a'));
    expect(windowsOf('c')).toBe(windowsOf('a'));
    expect(windowsOf('e')).toBe(windowsOf('d'));
    expect(windowsOf('f')).toBe(windowsOf('d'));
    expect(windowsOf('d')).not.toBe(windowsOf('a'));
    expect(windowsOf('d')).toEqual(windowsOf('a'));
  });

  it('attributes lines without speaker_id by speaker name', () => {
    const watchlist = watchlistOf([jensen], [speakerAlert()]);
    const lines = transcriptLines(fillerLines(10));
    lines[3]!.speaker = 'Jensen Huang';
    const episode = episodeWith({
      lines,
      speakers: [{ name: 'Jensen Huang', role: 'GUEST', entity_id: 'jensen' }],
    });
    expect(run(watchlist, episode).map((r) => r.mentionCount)).toEqual([1]);
  });
});

describe('matchEpisode: filters', () => {
  const mentioned = (overrides: Partial<EpisodeTranscribed> = {}) =>
    episodeWith({ lines: linesWith({ 3: 'Nvidia' }), ...overrides });
  const alertsFor = (filters: WatchedAlert['filters']) =>
    watchlistOf([nvidia], [watched({ entityId: 'nvda', filters })]);

  it('matches languages on the primary subtag of the episode language', () => {
    expect(run(alertsFor({ languages: ['en'] }), mentioned())).toHaveLength(1);
    expect(run(alertsFor({ languages: ['fr', 'de'] }), mentioned())).toHaveLength(0);
  });

  it('falls back to the transcript language, then the podcast language', () => {
    const base = mentioned();
    const noEpisodeLanguage = { ...base, episode: { ...base.episode, language: undefined } };
    const fr = { ...noEpisodeLanguage, transcript: { ...base.transcript!, language: 'fr' } };
    expect(run(alertsFor({ languages: ['fr'] }), fr)).toHaveLength(1);
    const podcastOnly = {
      ...noEpisodeLanguage,
      transcript: { lines: base.transcript!.lines! },
      podcast: { ...base.podcast, language: 'de-AT' },
    };
    expect(run(alertsFor({ languages: ['de'] }), podcastOnly)).toHaveLength(1);
    expect(run(alertsFor({ languages: ['en'] }), podcastOnly)).toHaveLength(0);
  });

  it('keeps podcasts that reach any listed popularity tier', () => {
    expect(run(alertsFor({ sourcePopularity: ['VERY_POPULAR'] }), mentioned())).toHaveLength(1);
    expect(run(alertsFor({ sourcePopularity: ['TOP_PODCAST'] }), mentioned())).toHaveLength(0);
    expect(run(alertsFor({ sourcePopularity: ['TOP_PODCAST', 'POPULAR'] }), mentioned())).toHaveLength(1);
    const unknown = mentioned({ podcast: { id: 'p', title: 't' } });
    expect(run(alertsFor({ sourcePopularity: ['POPULAR'] }), unknown)).toHaveLength(0);
  });

  it('with RELEVANT, drops detected mentions that are incidental', () => {
    const [all] = run(alertsFor({}), mentioned());
    expect(all?.relevance).toBe('incidental');
    expect(run(alertsFor({ relevance: 'RELEVANT' }), mentioned())).toEqual([]);
  });

  it('judges detected mentions on_target from three lines or a mention in the title or description', () => {
    const threeLines = episodeWith({ lines: linesWith({ 3: 'Nvidia', 9: 'nvidia', 14: 'NVIDIA' }) });
    expect(run(alertsFor({ relevance: 'RELEVANT' }), threeLines).map((r) => r.relevance)).toEqual([
      'on_target',
    ]);
    const base = mentioned();
    const inTitle = { ...base, episode: { ...base.episode, title: 'Inside Nvidia' } };
    expect(run(alertsFor({ relevance: 'RELEVANT' }), inTitle).map((r) => r.relevance)).toEqual(['on_target']);
    const inDescription = { ...base, episode: { ...base.episode, description: 'All about NVIDIA.' } };
    expect(run(alertsFor({ relevance: 'RELEVANT' }), inDescription).map((r) => r.relevance)).toEqual([
      'on_target',
    ]);
  });

  it("with RELEVANT, counts only the producer's on_target mentions", () => {
    const episode = episodeWith({
      mentions: [
        { entity_id: 'nvda', lines: [2, 3], variants: ['Nvidia'], relevance: 'incidental' },
        { entity_id: 'nvda', lines: [15], variants: ['NVDA'], relevance: 'on_target' },
      ],
    });
    const [relevant] = run(alertsFor({ relevance: 'RELEVANT' }), episode);
    expect(relevant).toMatchObject({ mentionCount: 1, mentionVariants: ['NVDA'], relevance: 'on_target' });
    const [all] = run(alertsFor({}), episode);
    expect(all).toMatchObject({
      mentionCount: 3,
      mentionVariants: ['Nvidia', 'NVDA'],
      relevance: 'on_target',
    });
    const onlyIncidental = episodeWith({ mentions: [episode.mentions![0]!] });
    expect(run(alertsFor({ relevance: 'RELEVANT' }), onlyIncidental)).toEqual([]);
  });

  it('lets a speaker match pass RELEVANT', () => {
    const watchlist = watchlistOf(
      [jensen],
      [watched({ kind: 'PODCAST_SPEAKER', entityId: 'jensen', filters: { relevance: 'RELEVANT' } })],
    );
    const episode = episodeWith({
      speakers: [{ id: 'g', name: 'Jensen Huang', role: 'GUEST', entity_id: 'jensen' }],
    });
    expect(run(watchlist, episode).map((r) => r.relevance)).toEqual(['on_target']);
  });
});
