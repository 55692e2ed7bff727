import type { StoredLine } from '../../projections/transcripts/projection.ts';
import {
  findTranscript,
  type TranscriptRow,
  transcriptVersion,
} from '../../projections/transcripts/queries.ts';
import type { Queryable } from '../db/db.ts';

const MAX_ENTRIES = 200;

/**
 * Transcripts read whole, kept per process for the episode version they belong to: a long
 * transcript costs far more to transfer and parse than the one-row version check that guards it,
 * and a re-sent episode has a new version, so a stale copy is never served.
 */
export function transcriptCache() {
  const entries = new Map<string, { version: string; row: TranscriptRow | null }>();
  return async function cachedTranscript(db: Queryable, episodeId: string): Promise<TranscriptRow | null> {
    const version = await transcriptVersion(db, episodeId);
    if (version === null) return null;
    const hit = entries.get(episodeId);
    if (hit && hit.version === version) {
      entries.delete(episodeId);
      entries.set(episodeId, hit);
      return hit.row;
    }
    const row = await findTranscript(db, episodeId);
    entries.set(episodeId, { version, row });
    if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
    return row;
  };
}

const renderings = new WeakMap<readonly StoredLine[], Map<string, Buffer>>();

/**
 * A whole transcript rendered once (srt, the JSON of its lines…), encoded, and kept as long as its
 * lines: the cache above hands out the same lines for one version, so a rendering is never stale,
 * and rendering and encoding 2,000 lines cost far more than the request around them.
 */
export function rendering(lines: readonly StoredLine[], key: string, render: () => string): Buffer {
  const kept = renderings.get(lines) ?? new Map<string, Buffer>();
  renderings.set(lines, kept);
  const bytes = kept.get(key) ?? Buffer.from(render());
  kept.set(key, bytes);
  return bytes;
}
