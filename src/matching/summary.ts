import type { EpisodeTranscribed } from '../ingestion/events.ts';
import type { AlertMatchedEventData } from './streams.ts';

/**
 * Writes a match's llm_summary. Providers may call a model; the summarizer retries nothing and
 * skips a match whose provider throws (the summary is optional: "may be absent").
 */
export interface SummaryProvider {
  name: string;
  /** A short summary of why the match matters, or null when there is nothing to say. */
  summarize(match: AlertMatchedEventData, episode: EpisodeTranscribed | null): Promise<string | null>;
}

export const MAX_SUMMARY_LENGTH = 600;
const SENTENCES = 2;
/**
 * What the extractive provider weighs: the first distinct sentences of the mention lines and the
 * first variants of the match. Each sentence is checked against each variant: unbounded, one 0.5 MB
 * episode (16,000 sentences, 40,000 variants) held the summarizer for 27 s on one match
 * (docs/matching-pipeline.md, Summaries).
 */
export const MAX_SUMMARY_SENTENCES = 1_000;
export const MAX_SUMMARY_VARIANTS = 100;

const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by for from had has have he her his i if in into is it its just like me my ' +
    'no not of on or our out so that the their them then there these they this to up was we were what when ' +
    'which who will with would you your yeah um uh okay oh well really very know think going get got'
  ).split(' '),
);

interface Candidate {
  text: string;
  order: number;
  score: number;
}

/**
 * The built-in provider, extractive and offline: from the mention lines of the match's windows it
 * keeps the two most informative sentences (most distinct content words, plus a bonus for naming
 * the entity), in transcript order, after one line of context.
 */
export const extractiveSummaryProvider: SummaryProvider = {
  name: 'extractive',
  async summarize(match) {
    const variants = match.mentionVariants
      .slice(0, MAX_SUMMARY_VARIANTS)
      .map((variant) => variant.toLowerCase());
    const candidates: Candidate[] = [];
    const seen = new Set<string>();
    collect: for (const window of match.windows) {
      for (const line of window.lines) {
        if (!line.is_mention) continue;
        for (const sentence of sentencesOf(line.text)) {
          if (seen.size === MAX_SUMMARY_SENTENCES) break collect;
          const key = sentence.toLowerCase();
          if (seen.has(key)) continue;
          seen.add(key);
          candidates.push({
            text: sentence,
            order: candidates.length,
            score: informativeness(sentence, variants),
          });
        }
      }
    }
    const where = `"${match.episode.title}" (${match.episode.podcast_title})`;
    const lead =
      match.kind === 'PODCAST_SPEAKER'
        ? `${match.mentionVariants.join(', ') || 'The entity'} speaks on ${where}${rolesText(match.roles)}.`
        : `Mentioned on ${match.mentionCount} ${match.mentionCount === 1 ? 'line' : 'lines'} of ${where}.`;
    const chosen = candidates
      .filter((candidate) => candidate.score > 0)
      .sort((a, b) => b.score - a.score || a.order - b.order)
      .slice(0, SENTENCES)
      .sort((a, b) => a.order - b.order)
      .map((candidate) => `“${candidate.text}”`);
    return clip([lead, ...chosen].join(' '));
  },
};

function rolesText(roles: readonly string[]): string {
  return roles.length === 0
    ? ''
    : ` as ${roles.map((role) => role.toLowerCase().replaceAll('_', ' ')).join(', ')}`;
}

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?…])\s+/u)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0);
}

function informativeness(sentence: string, variants: readonly string[]): number {
  const words = sentence.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length < 3) return 0;
  const content = new Set(words.filter((word) => word.length > 2 && !STOP_WORDS.has(word)));
  const lower = sentence.toLowerCase();
  const names = variants.some((variant) => variant.length > 0 && lower.includes(variant)) ? 3 : 0;
  return content.size + names;
}

function clip(text: string): string {
  if (text.length <= MAX_SUMMARY_LENGTH) return text;
  const cut = text.slice(0, MAX_SUMMARY_LENGTH - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > MAX_SUMMARY_LENGTH / 2 ? cut.slice(0, space) : cut}…`;
}
