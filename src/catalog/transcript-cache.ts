import type { StoredLine } from '../../projections/transcripts/projection.ts';
import {
  findTranscript,
  type TranscriptRow,
  transcriptVersion,
} from '../../projections/transcripts/queries.ts';
import { ByteLru } from '../byte-lru.ts';
import type { Queryable } from '../db/db.ts';

interface Entry {
  version: string;
  row: TranscriptRow | null;
  /** Whole-transcript renderings (srt, the JSON of its lines…), encoded. */
  renderings: Map<string, Buffer>;
  /** The last answer joined around a rendering (joined, below). */
  joined?: Joined;
  /** Keeps a rendering with the entry while the cache that holds the entry has room for it. */
  keep(key: string, rendered: Buffer): void;
  /** Keeps `joined` in place of the last one, likewise. */
  keepJoined(joined: Joined): void;
}

interface Joined {
  key: string;
  head: string;
  tail: string;
  body: Buffer;
}

const joinedBytes = (j: Joined | undefined) =>
  j === undefined ? 0 : j.body.length + stringBytes(j.head) + stringBytes(j.tail);

/** A line's objects beyond its strings, and an entry's beyond its lines, in bytes (rounded up). */
const LINE_OVERHEAD = 160;
const ENTRY_OVERHEAD = 512;

/** Two bytes a character: what a string costs at most. */
const stringBytes = (s: string | undefined) => (s === undefined ? 0 : 2 * s.length);

function sizeOf(episodeId: string, version: string, row: TranscriptRow | null): number {
  let size = ENTRY_OVERHEAD + stringBytes(episodeId) + stringBytes(version);
  for (const line of row?.lines ?? [])
    size +=
      LINE_OVERHEAD +
      stringBytes(line.text) +
      stringBytes(line.speaker) +
      stringBytes(line.speaker_id) +
      stringBytes(line.role);
  return size;
}

const owners = new WeakMap<readonly StoredLine[], Entry>();

/**
 * Transcripts read whole, kept per process for the episode version they belong to, with what was
 * rendered from them, up to `maxBytes` (docs/catalog.md, "Response cache"): a long transcript costs
 * far more to transfer and parse than the one-row version check that guards it, and a re-sent
 * episode has a new version, so a stale copy is never served. Least recently used go first; an
 * entry over a quarter of `maxBytes` is not kept, nor a rendering that would take it over.
 */
export function transcriptCache(maxBytes: number) {
  const entries = new ByteLru<Entry>(maxBytes);

  /** The transcript of `version`, read with the episode (transcriptVersionOf); null: none held. */
  async function atVersion(
    db: Queryable,
    episodeId: string,
    version: string | null,
  ): Promise<TranscriptRow | null> {
    if (version === null) return null;
    const hit = entries.get(episodeId);
    if (hit && hit.version === version) return hit.row;
    const row = await findTranscript(db, episodeId);
    const entry: Entry = {
      version,
      row,
      renderings: new Map(),
      keep(key, rendered) {
        if (entries.grow(episodeId, entry, rendered.length)) entry.renderings.set(key, rendered);
      },
      keepJoined(joined) {
        if (entries.grow(episodeId, entry, joinedBytes(joined) - joinedBytes(entry.joined)))
          entry.joined = joined;
      },
    };
    if (entries.set(episodeId, entry, sizeOf(episodeId, version, row)) && row) owners.set(row.lines, entry);
    return row;
  }
  const cachedTranscript = async (db: Queryable, episodeId: string) =>
    atVersion(db, episodeId, await transcriptVersion(db, episodeId));
  /** Bytes held now, as counted against `maxBytes`. */
  const heldBytes = () => entries.bytes;
  return Object.assign(cachedTranscript, { atVersion, heldBytes });
}

/**
 * A whole transcript rendered (srt, the JSON of its lines…) and encoded, once per version while the
 * cache above keeps its lines: it hands out the same lines for one version, so a rendering is never
 * stale, and rendering and encoding 2,000 lines cost far more than the request around them.
 */
export function rendering(lines: readonly StoredLine[], key: string, render: () => string): Buffer {
  const entry = owners.get(lines);
  const kept = entry?.renderings.get(key);
  if (kept) return kept;
  const bytes = Buffer.from(render());
  entry?.keep(key, bytes);
  return bytes;
}

/**
 * `head`, the rendering `key` (as above) and `tail` as one body. The last one joined is kept with
 * the transcript and sent again while a request's head and tail are the same: the head is the part
 * computed per request from the read models (an episode's fields), so only the copy of the
 * rendering is spared, 336 kB for the lines of a 2,000-line transcript.
 */
export function joined(
  lines: readonly StoredLine[],
  key: string,
  render: () => string,
  head: string,
  tail: string,
): Buffer {
  const entry = owners.get(lines);
  const last = entry?.joined;
  if (last && last.key === key && last.head === head && last.tail === tail) return last.body;
  const body = Buffer.concat([Buffer.from(head), rendering(lines, key, render), Buffer.from(tail)]);
  entry?.keepJoined({ key, head, tail, body });
  return body;
}
