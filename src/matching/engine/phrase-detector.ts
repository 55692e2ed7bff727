import * as folding from './text-folding.ts';

// Local copies: the scanner reads these per character, and module bindings may be getters once transpiled.
const { classifyCodeUnit, foldAstral, foldWords } = folding;
const FOLD: Int32Array = folding.FOLD;
const EXPANSIONS: Map<number, string> = folding.EXPANSIONS;
const SEPARATOR: number = folding.SEPARATOR;
const UNKNOWN: number = folding.UNKNOWN;
const IGNORED: number = folding.IGNORED;
const EXPANDS: number = folding.EXPANDS;
const SURROGATE: number = folding.SURROGATE;

/**
 * Whole-word, case- and accent-insensitive detection of many names at once.
 *
 * Text is folded (text-folding.ts) and cut into words in a single pass over its UTF-16 code units,
 * without building a folded copy: each word's hash is computed as it is read and looked up in the
 * vocabulary of words that occur in any name (an open-addressing table over typed arrays). Names are
 * sequences of vocabulary word ids stored in a word-level trie, so a phrase is found by walking
 * at most its own number of words from each word that starts some phrase. The cost is one hash probe
 * per word of text, independent of the number of names, and nothing is allocated per word.
 *
 * Phrases are added and removed one entity at a time (setNames/removeEntity); the trie is pruned
 * and vocabulary entries are released when their last phrase goes, so there is never a rebuild.
 */
export interface DetectedPhrase {
  /** The folded words joined by one space: the phrase's identity. */
  readonly key: string;
  /** The entities that have this phrase among their names (several entities may share a name). */
  readonly entityIds: readonly string[];
}

/** start/end: UTF-16 offsets in the scanned text of the first word's start and the last word's end. */
export type PhraseHitHandler = (phrase: DetectedPhrase, start: number, end: number) => void;

export interface PhraseHit {
  phrase: DetectedPhrase;
  start: number;
  end: number;
}

interface Phrase extends DetectedPhrase {
  readonly entityIds: string[];
  readonly tokens: number[];
  readonly node: number;
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;
const NONE = -1;
const ROOT = 0;

function grownInt32(array: Int32Array, size: number, fill: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(size);
  grown.set(array);
  grown.fill(fill, array.length);
  return grown;
}

function hashWord(word: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), FNV_PRIME);
  return hash;
}

/** Linear-probing slot of a 32-bit hash in a table of 2^bits slots (Fibonacci hashing). */
function homeSlot(hash: number, bits: number): number {
  return Math.imul(hash ^ (hash >>> 16), 0x9e3779b1) >>> (32 - bits);
}

function edgeHash(parent: number, token: number): number {
  return Math.imul(parent, 0x85ebca77) ^ Math.imul(token + 1, 0xc2b2ae3d);
}

export class PhraseDetector {
  // Vocabulary: word id → text, hash, characters (in `chars`), number of phrases using it.
  private readonly wordIds = new Map<string, number>();
  private wordText: string[] = [];
  private wordHash = new Int32Array(1024);
  private wordOffset = new Int32Array(1024);
  private wordLength = new Int32Array(1024);
  private wordRefs = new Int32Array(1024);
  private freeWords: number[] = [];
  private chars = new Uint16Array(16384);
  private charsUsed = 0;
  private charsFreed = 0;
  // Vocabulary hash table: slot → word id + 1 (0 = empty).
  private vocabBits = 11;
  private vocabSlots = new Int32Array(1 << 11);
  private vocabUsed = 0;

  // Trie: node 0 is the root; root edges by word id in rootChild, other edges in the edge table.
  private rootChild = new Int32Array(1024).fill(NONE);
  private nodeTerminal = new Int32Array(1024).fill(NONE);
  private nodeChildren = new Int32Array(1024);
  private nodeParent = new Int32Array(1024);
  private nodeToken = new Int32Array(1024);
  private nodesUsed = 1;
  private freeNodes: number[] = [];
  private edgeBits = 11;
  private edgeParent = new Int32Array(1 << 11).fill(NONE);
  private edgeToken = new Int32Array(1 << 11);
  private edgeChild = new Int32Array(1 << 11);
  private edgesUsed = 0;

  // Phrases and the entities that own them.
  private phrases: (Phrase | undefined)[] = [];
  private freePhrases: number[] = [];
  private readonly phraseIds = new Map<string, number>();
  private readonly entityPhrases = new Map<string, string[]>();

  // Scan buffers, reused across calls.
  private wordBuffer = new Uint16Array(256);
  private scanIds = new Int32Array(4096);
  private scanStarts = new Int32Array(4096);
  private scanEnds = new Int32Array(4096);

  /** Number of distinct phrases watched. */
  get phraseCount(): number {
    return this.phraseIds.size;
  }

  get entityCount(): number {
    return this.entityPhrases.size;
  }

  get wordCount(): number {
    return this.wordIds.size;
  }

  hasEntity(entityId: string): boolean {
    return this.entityPhrases.has(entityId);
  }

  /** The phrase keys currently watched for an entity. */
  phrasesOf(entityId: string): readonly string[] {
    return this.entityPhrases.get(entityId) ?? [];
  }

  /**
   * Sets the names (name and aliases) detected for an entity, replacing the previous ones; only the
   * difference touches the trie. Names without any letter or digit are ignored.
   */
  setNames(entityId: string, names: readonly string[]): void {
    const next = new Map<string, string[]>();
    for (const name of names) {
      const words = foldWords(name);
      if (words.length > 0) next.set(words.join(' '), words);
    }
    const previous = this.entityPhrases.get(entityId) ?? [];
    for (const key of previous) if (!next.has(key)) this.detach(key, entityId);
    const previousKeys = new Set(previous);
    for (const [key, words] of next) if (!previousKeys.has(key)) this.attach(key, words, entityId);
    if (next.size === 0) this.entityPhrases.delete(entityId);
    else this.entityPhrases.set(entityId, [...next.keys()]);
  }

  removeEntity(entityId: string): void {
    this.setNames(entityId, []);
  }

  /** Every phrase occurrence in the text, in order of start, shorter phrases first at equal starts. */
  findAll(text: string): PhraseHit[] {
    const hits: PhraseHit[] = [];
    this.scan(text, (phrase, start, end) => hits.push({ phrase, start, end }));
    return hits;
  }

  /** Calls onHit for every phrase occurrence (overlapping ones included) in the text. */
  scan(text: string, onHit: PhraseHitHandler): void {
    const fold = FOLD;
    let buffer = this.wordBuffer;
    let length = 0;
    let hash = FNV_OFFSET;
    let start = 0;
    let end = 0;
    let count = 0;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      const f = fold[c]!;
      if (f > 0) {
        if (length === 0) start = i;
        if (length === buffer.length) buffer = this.growWordBuffer();
        buffer[length++] = f;
        hash = Math.imul(hash ^ f, FNV_PRIME);
        end = i + 1;
      } else if (f === SEPARATOR) {
        if (length > 0) {
          count = this.pushWord(count, hash, length, start, end);
          length = 0;
          hash = FNV_OFFSET;
        }
      } else if (f === IGNORED) {
        if (length > 0) end = i + 1;
      } else if (f === UNKNOWN) {
        classifyCodeUnit(c);
        i--;
      } else {
        let folded = ' ';
        let width = 1;
        if (f === EXPANDS) folded = EXPANSIONS.get(c)!;
        else if (f === SURROGATE) {
          const cp = text.codePointAt(i)!;
          if (cp > 0xffff) {
            folded = foldAstral(cp);
            width = 2;
          }
        }
        if (folded.length === 0 && length > 0) end = i + width;
        for (let k = 0; k < folded.length; k++) {
          const u = folded.charCodeAt(k);
          if (u === 32) {
            if (length > 0) {
              count = this.pushWord(count, hash, length, start, end);
              length = 0;
              hash = FNV_OFFSET;
            }
          } else {
            if (length === 0) start = i;
            if (length === buffer.length) buffer = this.growWordBuffer();
            buffer[length++] = u;
            hash = Math.imul(hash ^ u, FNV_PRIME);
            end = i + width;
          }
        }
        i += width - 1;
      }
    }
    if (length > 0) count = this.pushWord(count, hash, length, start, end);
    this.walk(count, onHit);
  }

  private walk(count: number, onHit: PhraseHitHandler): void {
    const ids = this.scanIds;
    const starts = this.scanStarts;
    const ends = this.scanEnds;
    const rootChild = this.rootChild;
    const terminal = this.nodeTerminal;
    for (let t = 0; t < count; t++) {
      const first = ids[t]!;
      if (first < 0) continue;
      let node = rootChild[first]!;
      let u = t;
      while (node !== NONE) {
        const phrase = terminal[node]!;
        if (phrase !== NONE) onHit(this.phrases[phrase]!, starts[t]!, ends[u]!);
        u++;
        if (u >= count) break;
        const next = ids[u]!;
        if (next < 0) break;
        node = this.edge(node, next);
      }
    }
  }

  /** Records a word of the text as its vocabulary id, or NONE; runs of unknown words collapse. */
  private pushWord(count: number, hash: number, length: number, start: number, end: number): number {
    const id = this.lookupWord(hash, length);
    if (id === NONE && count > 0 && this.scanIds[count - 1] === NONE) return count;
    if (count === this.scanIds.length) {
      const size = count * 2;
      this.scanIds = grownInt32(this.scanIds, size, 0);
      this.scanStarts = grownInt32(this.scanStarts, size, 0);
      this.scanEnds = grownInt32(this.scanEnds, size, 0);
    }
    this.scanIds[count] = id;
    this.scanStarts[count] = start;
    this.scanEnds[count] = end;
    return count + 1;
  }

  private lookupWord(hash: number, length: number): number {
    const slots = this.vocabSlots;
    const mask = slots.length - 1;
    const buffer = this.wordBuffer;
    const chars = this.chars;
    let slot = homeSlot(hash, this.vocabBits);
    for (;;) {
      const entry = slots[slot]!;
      if (entry === 0) return NONE;
      const id = entry - 1;
      if (this.wordHash[id] === hash && this.wordLength[id] === length) {
        const offset = this.wordOffset[id]!;
        let k = 0;
        while (k < length && chars[offset + k] === buffer[k]) k++;
        if (k === length) return id;
      }
      slot = (slot + 1) & mask;
    }
  }

  private growWordBuffer(): Uint16Array<ArrayBuffer> {
    const grown = new Uint16Array(this.wordBuffer.length * 2);
    grown.set(this.wordBuffer);
    this.wordBuffer = grown;
    return grown;
  }

  private attach(key: string, words: readonly string[], entityId: string): void {
    const existing = this.phraseIds.get(key);
    if (existing !== undefined) {
      this.phrases[existing]!.entityIds.push(entityId);
      return;
    }
    const tokens = words.map((word) => this.internWord(word));
    let node = ROOT;
    for (const token of tokens) node = this.childOrCreate(node, token);
    const id = this.freePhrases.pop() ?? this.phrases.length;
    this.phrases[id] = { key, entityIds: [entityId], tokens, node };
    this.phraseIds.set(key, id);
    this.nodeTerminal[node] = id;
  }

  private detach(key: string, entityId: string): void {
    const id = this.phraseIds.get(key);
    if (id === undefined) return;
    const phrase = this.phrases[id]!;
    const at = phrase.entityIds.indexOf(entityId);
    if (at >= 0) phrase.entityIds.splice(at, 1);
    if (phrase.entityIds.length > 0) return;
    this.phraseIds.delete(key);
    this.phrases[id] = undefined;
    this.freePhrases.push(id);
    this.nodeTerminal[phrase.node] = NONE;
    let node = phrase.node;
    while (node !== ROOT && this.nodeTerminal[node] === NONE && this.nodeChildren[node] === 0) {
      const parent = this.nodeParent[node]!;
      this.deleteEdge(parent, this.nodeToken[node]!);
      this.nodeChildren[parent]!--;
      this.freeNodes.push(node);
      node = parent;
    }
    for (const token of phrase.tokens) this.releaseWord(token);
  }

  private internWord(word: string): number {
    const known = this.wordIds.get(word);
    if (known !== undefined) {
      this.wordRefs[known]!++;
      return known;
    }
    const id = this.freeWords.pop() ?? this.wordText.length;
    if (id >= this.wordHash.length) {
      const size = this.wordHash.length * 2;
      this.wordHash = grownInt32(this.wordHash, size, 0);
      this.wordOffset = grownInt32(this.wordOffset, size, 0);
      this.wordLength = grownInt32(this.wordLength, size, 0);
      this.wordRefs = grownInt32(this.wordRefs, size, 0);
      this.rootChild = grownInt32(this.rootChild, size, NONE);
    }
    if (this.charsUsed + word.length > this.chars.length) this.compactChars(word.length);
    for (let k = 0; k < word.length; k++) this.chars[this.charsUsed + k] = word.charCodeAt(k);
    this.wordText[id] = word;
    this.wordHash[id] = hashWord(word);
    this.wordOffset[id] = this.charsUsed;
    this.wordLength[id] = word.length;
    this.wordRefs[id] = 1;
    this.rootChild[id] = NONE;
    this.charsUsed += word.length;
    this.wordIds.set(word, id);
    if ((this.vocabUsed + 1) * 2 > this.vocabSlots.length) this.resizeVocab(this.vocabBits + 1);
    this.insertVocabSlot(id);
    this.vocabUsed++;
    return id;
  }

  private releaseWord(id: number): void {
    if (--this.wordRefs[id]! > 0) return;
    this.deleteVocabSlot(id);
    this.vocabUsed--;
    this.wordIds.delete(this.wordText[id]!);
    this.wordText[id] = '';
    this.charsFreed += this.wordLength[id]!;
    this.wordLength[id] = 0;
    this.freeWords.push(id);
  }

  /** Makes room for `needed` more characters: drops released words' characters, grows if still short. */
  private compactChars(needed: number): void {
    const live = this.charsUsed - this.charsFreed;
    let size = this.chars.length;
    while (live + needed > size / 2) size *= 2;
    const chars = new Uint16Array(size);
    let used = 0;
    for (let id = 0; id < this.wordText.length; id++) {
      const word = this.wordText[id]!;
      if (word.length === 0) continue;
      for (let k = 0; k < word.length; k++) chars[used + k] = word.charCodeAt(k);
      this.wordOffset[id] = used;
      used += word.length;
    }
    this.chars = chars;
    this.charsUsed = used;
    this.charsFreed = 0;
  }

  private insertVocabSlot(id: number): void {
    const mask = this.vocabSlots.length - 1;
    let slot = homeSlot(this.wordHash[id]!, this.vocabBits);
    while (this.vocabSlots[slot] !== 0) slot = (slot + 1) & mask;
    this.vocabSlots[slot] = id + 1;
  }

  private resizeVocab(bits: number): void {
    const old = this.vocabSlots;
    this.vocabBits = bits;
    this.vocabSlots = new Int32Array(1 << bits);
    for (const entry of old) if (entry !== 0) this.insertVocabSlot(entry - 1);
  }

  private deleteVocabSlot(id: number): void {
    const slots = this.vocabSlots;
    const mask = slots.length - 1;
    let hole = homeSlot(this.wordHash[id]!, this.vocabBits);
    while (slots[hole] !== id + 1) hole = (hole + 1) & mask;
    // Backward-shift deletion keeps every probe chain unbroken without tombstones.
    let next = hole;
    for (;;) {
      next = (next + 1) & mask;
      const entry = slots[next]!;
      if (entry === 0) break;
      const home = homeSlot(this.wordHash[entry - 1]!, this.vocabBits);
      if (hole <= next ? hole < home && home <= next : hole < home || home <= next) continue;
      slots[hole] = entry;
      hole = next;
    }
    slots[hole] = 0;
  }

  private childOrCreate(parent: number, token: number): number {
    const existing = parent === ROOT ? this.rootChild[token]! : this.edge(parent, token);
    if (existing !== NONE) return existing;
    const node = this.freeNodes.pop() ?? this.nodesUsed++;
    if (node >= this.nodeTerminal.length) {
      const size = this.nodeTerminal.length * 2;
      this.nodeTerminal = grownInt32(this.nodeTerminal, size, NONE);
      this.nodeChildren = grownInt32(this.nodeChildren, size, 0);
      this.nodeParent = grownInt32(this.nodeParent, size, 0);
      this.nodeToken = grownInt32(this.nodeToken, size, 0);
    }
    this.nodeTerminal[node] = NONE;
    this.nodeChildren[node] = 0;
    this.nodeParent[node] = parent;
    this.nodeToken[node] = token;
    this.nodeChildren[parent]!++;
    if (parent === ROOT) this.rootChild[token] = node;
    else {
      if ((this.edgesUsed + 1) * 2 > this.edgeParent.length) this.resizeEdges(this.edgeBits + 1);
      this.insertEdge(parent, token, node);
      this.edgesUsed++;
    }
    return node;
  }

  private edge(parent: number, token: number): number {
    const mask = this.edgeParent.length - 1;
    let slot = homeSlot(edgeHash(parent, token), this.edgeBits);
    for (;;) {
      const p = this.edgeParent[slot]!;
      if (p === NONE) return NONE;
      if (p === parent && this.edgeToken[slot] === token) return this.edgeChild[slot]!;
      slot = (slot + 1) & mask;
    }
  }

  private insertEdge(parent: number, token: number, child: number): void {
    const mask = this.edgeParent.length - 1;
    let slot = homeSlot(edgeHash(parent, token), this.edgeBits);
    while (this.edgeParent[slot] !== NONE) slot = (slot + 1) & mask;
    this.edgeParent[slot] = parent;
    this.edgeToken[slot] = token;
    this.edgeChild[slot] = child;
  }

  private resizeEdges(bits: number): void {
    const parents = this.edgeParent;
    const tokens = this.edgeToken;
    const children = this.edgeChild;
    this.edgeBits = bits;
    this.edgeParent = new Int32Array(1 << bits).fill(NONE);
    this.edgeToken = new Int32Array(1 << bits);
    this.edgeChild = new Int32Array(1 << bits);
    for (let slot = 0; slot < parents.length; slot++) {
      if (parents[slot] !== NONE) this.insertEdge(parents[slot]!, tokens[slot]!, children[slot]!);
    }
  }

  private deleteEdge(parent: number, token: number): void {
    if (parent === ROOT) {
      this.rootChild[token] = NONE;
      return;
    }
    const parents = this.edgeParent;
    const tokens = this.edgeToken;
    const children = this.edgeChild;
    const mask = parents.length - 1;
    let hole = homeSlot(edgeHash(parent, token), this.edgeBits);
    while (parents[hole] !== parent || tokens[hole] !== token) hole = (hole + 1) & mask;
    let next = hole;
    for (;;) {
      next = (next + 1) & mask;
      const p = parents[next]!;
      if (p === NONE) break;
      const home = homeSlot(edgeHash(p, tokens[next]!), this.edgeBits);
      if (hole <= next ? hole < home && home <= next : hole < home || home <= next) continue;
      parents[hole] = p;
      tokens[hole] = tokens[next]!;
      children[hole] = children[next]!;
      hole = next;
    }
    parents[hole] = NONE;
    this.edgesUsed--;
  }
}
