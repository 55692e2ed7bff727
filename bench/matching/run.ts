/**
 * Matching benchmark: detection throughput (with modern-ahocorasick as yardstick on the same
 * patterns and text), matcher throughput and the memory of the alert index and detector.
 *
 *   npm run bench:matching            (or: node --import tsx bench/matching/run.ts)
 *
 * Everything runs on one core in this process. Sizes: 50,000 entities, 100,000 active alerts,
 * episodes with 2,000-line transcripts.
 */
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import AhoCorasick from 'modern-ahocorasick';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { AlertIndex } from '../../src/matching/engine/alert-index.ts';
import { matchEpisode } from '../../src/matching/engine/match-episode.ts';
import { PhraseDetector } from '../../src/matching/engine/phrase-detector.ts';
import { foldWords, normaliseText } from '../../src/matching/engine/text-folding.ts';
import { Watchlist } from '../../src/matching/engine/watchlist.ts';
import type { WatchedAlert } from '../../src/matching/types.ts';
import { measurePipeline } from './pipeline.ts';
import { type SyntheticEntity, syntheticAlerts, syntheticEntities, syntheticEpisode } from './synthetic.ts';

const ENTITIES = 50_000;
const ALERTS = 100_000;
const EPISODES = 40;
const LINES_PER_EPISODE = 2_000;
const MENTIONS_PER_EPISODE = 40;
const SECONDS_PER_MEASURE = Number(process.env.BENCH_SECONDS ?? 4);
const YARDSTICK_EPISODES = 4;

const TARGET_DETECTION_MB_S = 50;
const TARGET_PIPELINE_EPISODES_S = 50;
const TARGET_MEMORY_BYTES = 1024 ** 3;

function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
const gc = collector();

/** Live JS heap plus ArrayBuffer backing stores (the detector's typed arrays live there). */
function liveBytes(): number {
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/**
 * Runs `work` repeatedly for at least `seconds` of wall time, after one warm-up run. Reports the
 * wall time and this process's CPU time: on a busy machine the CPU time is the honest "one core"
 * figure (it also counts GC helper threads, so it errs low).
 */
function repeatFor(seconds: number, work: () => void): { runs: number; seconds: number; cpuSeconds: number } {
  work();
  let runs = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  let elapsed = 0;
  do {
    work();
    runs++;
    elapsed = (performance.now() - start) / 1000;
  } while (elapsed < seconds);
  const cpu = process.cpuUsage(cpuStart);
  return { runs, seconds: elapsed, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
const rate = (value: number, unit: string) => `${value.toFixed(1)} ${unit}`;

/**
 * The whole pipeline through the event store on PostgreSQL (bench/matching/pipeline.ts): ingest →
 * EpisodeTranscribed stored → realtime matcher consumer → AlertMatched appended, with the
 * benchmark's 50,000 entities and 100,000 alerts stored as events. Returns episodes/second end
 * to end (wall clock, one process), or undefined when PIPELINE_ROUNDS=0.
 */
async function measureThroughEventStore(
  entities: readonly SyntheticEntity[],
  alerts: readonly WatchedAlert[],
  episodes: readonly EpisodeTranscribed[],
): Promise<number | undefined> {
  const rounds = Number(process.env.PIPELINE_ROUNDS ?? 5);
  if (rounds === 0) return undefined;
  const result = await measurePipeline(entities, alerts, episodes, rounds);
  console.log(
    `pipeline: ${result.episodes} episodes, ${result.matchesAppended} matches appended in ${result.seconds.toFixed(1)} s ` +
      `(ingest alone ${result.ingestSeconds.toFixed(1)} s); setup ${result.setupSeconds.toFixed(1)} s; ` +
      `matcher first start (watchlist from ${entities.length + alerts.length} events) ${result.firstStartSeconds.toFixed(1)} s, ` +
      `restart rebuild (from the snapshot) ${result.restartSeconds.toFixed(2)} s`,
  );
  return result.episodesPerSecond;
}

async function main(): Promise<void> {
  console.log(`matching benchmark: node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown cpu'}`);
  console.log(
    `generating ${ENTITIES} entities, ${ALERTS} alerts, ${EPISODES} episodes × ${LINES_PER_EPISODE} lines…`,
  );
  const entities = syntheticEntities(ENTITIES);
  const alerts = syntheticAlerts(entities, ALERTS);
  const episodes = Array.from({ length: EPISODES }, (_, i) =>
    syntheticEpisode(entities, i, { lineCount: LINES_PER_EPISODE, mentionCount: MENTIONS_PER_EPISODE }),
  );
  const names = entities.reduce((sum, entity) => sum + 1 + entity.aliases.length, 0);
  const lines = episodes.flatMap((episode) => episode.transcript!.lines!.map((line) => line.text));
  const textBytes = lines.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

  // Memory: each structure alone, then the Watchlist the matcher consumer would hold.
  let before = liveBytes();
  const index = new AlertIndex();
  for (const alert of alerts) index.put(alert);
  const indexBytes = liveBytes() - before;

  before = liveBytes();
  let started = performance.now();
  const detector = new PhraseDetector();
  for (const entity of entities) {
    if (index.isWatched(entity.id)) detector.setNames(entity.id, [entity.name, ...entity.aliases]);
  }
  const detectorBuildMs = performance.now() - started;
  const detectorBytes = liveBytes() - before;
  const phrases = detector.phraseCount;
  const words = detector.wordCount;

  before = liveBytes();
  started = performance.now();
  const watchlist = new Watchlist();
  for (const entity of entities) watchlist.upsertEntity(entity);
  for (const alert of alerts) watchlist.putAlert(alert);
  const watchlistBuildMs = performance.now() - started;
  const watchlistBytes = liveBytes() - before;

  // Detection: every line of every episode, as the matcher scans them.
  let hits = 0;
  const count = () => {
    hits++;
  };
  const detection = repeatFor(SECONDS_PER_MEASURE, () => {
    for (const text of lines) watchlist.detector.scan(text, count);
  });
  const detectionMBs = (textBytes * detection.runs) / 1e6 / detection.cpuSeconds;
  const detectionWallMBs = (textBytes * detection.runs) / 1e6 / detection.seconds;
  const hitsPerEpisode = hits / ((detection.runs + 1) * EPISODES);

  // Yardstick: modern-ahocorasick over the same phrases on the same lines, folded beforehand
  // (its time excludes folding; ours includes it). Bytes are those of the original text.
  const keys = [
    ...new Set(entities.flatMap((e) => [e.name, ...e.aliases]).map((n) => foldWords(n).join(' '))),
  ];
  started = performance.now();
  const yardstick = new AhoCorasick(keys);
  const yardstickBuildMs = performance.now() - started;
  const yardstickLines = lines.slice(0, YARDSTICK_EPISODES * LINES_PER_EPISODE);
  const yardstickBytes = yardstickLines.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  const foldedLines = yardstickLines.map(normaliseText);
  const yardstickRate = (options: { wholeWord?: boolean }) => {
    const run = repeatFor(SECONDS_PER_MEASURE / 2, () => {
      for (const text of foldedLines) yardstick.search(text, options);
    });
    return (yardstickBytes * run.runs) / 1e6 / run.cpuSeconds;
  };
  const yardstickPlainMBs = yardstickRate({});
  const yardstickWholeWordMBs = yardstickRate({ wholeWord: true });

  // Matcher alone: detection plus alert evaluation, windows and match ids.
  let matches = 0;
  const now = new Date('2026-11-20T12:00:00Z');
  const matcher = repeatFor(SECONDS_PER_MEASURE, () => {
    for (const episode of episodes) {
      matches += matchEpisode(episode, { index: watchlist.index, detector: watchlist.detector, now }).length;
    }
  });
  const matcherEpisodesS = (EPISODES * matcher.runs) / matcher.cpuSeconds;
  const matcherWallEpisodesS = (EPISODES * matcher.runs) / matcher.seconds;
  const matchesPerEpisode = matches / ((matcher.runs + 1) * EPISODES);

  const pipelineEpisodesS = await measureThroughEventStore(entities, alerts, episodes);

  const rows: [string, string, string, string][] = [
    [
      'detection, this detector',
      rate(detectionMBs, 'MB/s'),
      `≥ ${TARGET_DETECTION_MB_S} MB/s`,
      detectionMBs >= TARGET_DETECTION_MB_S ? 'ok' : 'BELOW',
    ],
    ['detection, this detector (wall clock)', rate(detectionWallMBs, 'MB/s'), '-', '-'],
    ['detection, modern-ahocorasick search()', rate(yardstickPlainMBs, 'MB/s'), 'yardstick', '-'],
    ['detection, modern-ahocorasick wholeWord', rate(yardstickWholeWordMBs, 'MB/s'), 'yardstick', '-'],
    ['matcher alone', rate(matcherEpisodesS, 'episodes/s'), '-', '-'],
    ['matcher alone (wall clock)', rate(matcherWallEpisodesS, 'episodes/s'), '-', '-'],
    [
      'pipeline through the event store (wall clock)',
      pipelineEpisodesS === undefined ? 'not measured yet' : rate(pipelineEpisodesS, 'episodes/s'),
      `≥ ${TARGET_PIPELINE_EPISODES_S} episodes/s`,
      pipelineEpisodesS === undefined
        ? 'TODO'
        : pipelineEpisodesS >= TARGET_PIPELINE_EPISODES_S
          ? 'ok'
          : 'BELOW',
    ],
    [
      'memory: alert index + detector',
      mib(indexBytes + detectorBytes),
      '< 1024 MiB',
      indexBytes + detectorBytes < TARGET_MEMORY_BYTES ? 'ok' : 'ABOVE',
    ],
    ['memory: alert index alone', mib(indexBytes), '-', '-'],
    ['memory: detector alone', mib(detectorBytes), '-', '-'],
    ['memory: Watchlist (index + detector + names)', mib(watchlistBytes), '-', '-'],
  ];
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((row) => row[c]!.length), 8));
  const line = (cells: readonly string[]) => cells.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
  console.log('');
  console.log(
    `workload: ${ENTITIES} entities, ${names} names → ${phrases} distinct phrases over ${words} words; ` +
      `${ALERTS} alerts; ${EPISODES} episodes, ${(textBytes / EPISODES / 1e3).toFixed(0)} kB of text each`,
  );
  console.log(
    `per episode: ${hitsPerEpisode.toFixed(1)} phrase hits, ${matchesPerEpisode.toFixed(1)} matches; ` +
      `build: detector ${detectorBuildMs.toFixed(0)} ms, Watchlist ${watchlistBuildMs.toFixed(0)} ms, ` +
      `modern-ahocorasick ${yardstickBuildMs.toFixed(0)} ms`,
  );
  console.log(
    `rates per CPU-second of this process unless marked wall clock; load average ${os.loadavg()[0]!.toFixed(1)}`,
  );
  console.log('');
  console.log(line(['measure', 'result', 'target', 'status']));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
  // Keep the measured structures alive until here so the memory figures stay attributable.
  if (index.alertCount + detector.phraseCount < 0) console.log('unreachable');
}

await main();
