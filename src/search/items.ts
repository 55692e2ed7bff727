import { PASSAGE_LINES } from '../../projections/search-passages/passages.ts';
import type { KeywordFilter, ProducedMentions } from '../../projections/search-passages/queries.ts';
import { toClip, toSegment } from '../catalog/views.ts';
import type { EpisodeSegment } from '../ingestion/events.ts';
import { matchEpisodeBlock } from '../matching/engine/episode-block.ts';
import { PhraseDetector } from '../matching/engine/phrase-detector.ts';
import { foldWords } from '../matching/engine/text-folding.ts';
import { buildWindows } from '../matching/engine/windows.ts';
import type { MatchWindow, WindowLine } from '../matching/types.ts';
import { matchingLines } from './keywords.ts';
import type { EpisodeParts, PartSegment } from './parts.ts';
import type { ResolvedEntity } from './references.ts';

const defined = <T>(value: T | null | undefined) => (value === null ? undefined : value);

/** The positions from `before` lines before to `after` lines after each of `indexes`. */
export function around(indexes: readonly number[], before: number, after: number): number[] {
  const wanted = new Set<number>();
  for (const i of indexes) for (let k = Math.max(0, i - before); k <= i + after; k++) wanted.add(k);
  return [...wanted];
}

/** The match episode block, with the episode's id. */
function episodeBlock({ episode: e, podcast: p }: EpisodeParts) {
  return {
    id: e.id,
    ...matchEpisodeBlock({
      podcast: {
        id: e.podcast_id,
        title: p?.title ?? e.podcast_id,
        slug: defined(p?.slug),
        image_url: defined(p?.image_url),
        popularity: defined(p?.popularity),
        bias: defined(p?.bias),
        explicit: defined(p?.explicit),
      },
      episode: {
        id: e.id,
        title: e.title,
        published_at: new Date(e.published_at).toISOString(),
        duration_seconds: e.duration_seconds,
        slug: defined(e.slug),
        audio_url: defined(e.audio_url),
        image_url: defined(e.image_url),
        explicit: defined(e.explicit),
      },
    }),
  };
}

const episodeSegments = (rows: readonly PartSegment[]): EpisodeSegment[] =>
  rows.map((s) => ({
    id: s.id,
    title: s.title,
    number: s.number,
    start_seconds: s.start_seconds,
    end_seconds: s.end_seconds,
    ...(s.type === null ? {} : { type: s.type }),
    ...(s.start_line === null ? {} : { start_line: s.start_line }),
    ...(s.end_line === null ? {} : { end_line: s.end_line }),
  }));

function windowsOf(parts: EpisodeParts, indexes: readonly number[], contextLines?: number) {
  const speakersById = new Map(parts.episode.speakers.flatMap((s) => (s.id ? [[s.id, s]] : [])));
  const clips = parts.clips.map((c) => ({
    id: c.id,
    title: c.title,
    start_seconds: c.start_seconds,
    end_seconds: c.end_seconds,
    engagement_score: c.engagement_score,
    ...(c.type === null ? {} : { type: c.type }),
  }));
  return buildWindows(
    { lines: parts.lines, segments: episodeSegments(parts.segments), clips, speakersById },
    indexes,
    contextLines,
  );
}

/** A window line as search shows it: is_match for is_mention, last (keys in the same order; no rest copy). */
function searchLine(l: WindowLine) {
  const line: Omit<WindowLine, 'is_mention'> & { is_match?: boolean } = {
    number: l.number,
    start_seconds: l.start_seconds,
    end_seconds: l.end_seconds,
    text: l.text,
  };
  if (l.role !== undefined) line.role = l.role;
  if (l.speaker !== undefined) line.speaker = l.speaker;
  line.is_match = l.is_mention;
  return line;
}

const searchWindow = (w: MatchWindow) => ({
  start_seconds: w.start_seconds,
  end_seconds: w.end_seconds,
  lines: w.lines.map(searchLine),
});

/** The matcher's detector of the entity's name and aliases; one serves every episode of a page. */
export function nameDetector(entity: ResolvedEntity): PhraseDetector {
  const detector = new PhraseDetector();
  detector.setNames(entity.entity.id, [entity.entity.name, ...entity.entity.aliases]);
  return detector;
}

/**
 * The lines of the episode that mention the entity: the producer's when it sent any, else the
 * matcher's detection (`detector`, from nameDetector) run on the `candidates` the index found
 * (positions). `lost`: some of those lines are not in the transcript as it is now (docs/search.md,
 * "Lines are not copied").
 */
export function entityMentions(
  parts: EpisodeParts,
  detector: PhraseDetector,
  produced: ProducedMentions | undefined,
  candidates: readonly number[] = [],
) {
  if (produced !== undefined) {
    const wanted = new Set(produced.lines);
    const indexes = parts.lines.flatMap((line, i) => (wanted.has(line.number) ? [i] : []));
    return {
      indexes,
      count: produced.mention_count,
      variants: produced.variants,
      lost: indexes.length < wanted.size,
    };
  }
  const indexes: number[] = [];
  const variants = new Set<string>();
  for (const i of candidates) {
    const line = parts.lines[i];
    if (line === undefined) continue;
    const hits = detector.findAll(line.text);
    if (hits.length === 0) continue;
    indexes.push(i);
    for (const hit of hits) variants.add(line.text.slice(hit.start, hit.end));
  }
  return {
    indexes,
    count: indexes.length,
    variants: [...variants],
    lost: indexes.length < candidates.length,
  };
}

/** A mention list item (docs/search.md, "GET /v1/podcasts/mentions"). */
export function mentionItem(
  parts: EpisodeParts,
  mentions: ReturnType<typeof entityMentions>,
  contextLines: number,
) {
  const { windows, truncated } = windowsOf(parts, mentions.indexes, contextLines);
  return {
    episode: episodeBlock(parts),
    mention_count: mentions.count,
    mention_variants: mentions.variants,
    windows,
    truncated: truncated || mentions.lost,
  };
}

/** A search item: the best passage's segment and clips, windows around every matching line. */
export function searchItem(
  parts: EpisodeParts,
  match: {
    keywords?: KeywordFilter | undefined;
    starts: readonly number[];
    bestStart: number | null;
    score: number;
    mentions?: { indexes: number[]; lost: boolean };
    source?: 'keyword' | 'semantic' | 'hybrid';
  },
) {
  const { keywords } = match;
  const indexes = keywords
    ? matchingLines(
        parts.lines.length,
        (i) => (parts.lines[i] ? foldWords(parts.lines[i].text) : []),
        keywords.terms,
        keywords.all,
        match.starts,
      )
    : (match.mentions?.indexes ?? []);
  const { windows, truncated } = windowsOf(parts, indexes);
  // Lines the index found that the transcript no longer holds as they were.
  const lost =
    match.mentions?.lost === true ||
    match.starts.some((start) => !indexes.some((i) => i >= start && i < start + PASSAGE_LINES));
  const best = match.bestStart ?? 0;
  const bestLine = indexes.find((i) => i >= best && i < best + PASSAGE_LINES) ?? indexes[0];
  const passage =
    bestLine === undefined
      ? undefined
      : windows.find((w) => w.lines.some((l) => l.number === parts.lines[bestLine]!.number));
  const segment = passage?.segment_id ? parts.segments.find((s) => s.id === passage.segment_id) : undefined;
  const clips = passage
    ? parts.clips
        .filter((c) => c.start_seconds < passage.end_seconds && c.end_seconds > passage.start_seconds)
        .sort((a, b) => b.engagement_score - a.engagement_score)
    : [];
  const segmentsById = new Map(parts.segments.map((s) => [s.id, s]));
  return {
    episode: episodeBlock(parts),
    ...(segment ? { segment: toSegment(segment) } : {}),
    windows: windows.map(searchWindow),
    truncated: truncated || lost,
    clips: clips.map((c) =>
      toClip(c, {
        segment: c.segment_id ? segmentsById.get(c.segment_id) : undefined,
        entities: parts.speakerEntities,
      }),
    ),
    match: { source: match.source ?? 'keyword', relevance_score: Math.round(match.score * 10000) / 10000 },
  };
}
