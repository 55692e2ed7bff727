import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ErrorDetail } from '../errors.ts';
import type { EventStore } from '../eventstore/port.ts';
import type { IngestEvent } from '../ingestion/events.ts';
import { ingestEvents } from '../ingestion/ingest.ts';
import { validateEvent } from '../ingestion/validate.ts';

const BATCH = 500;

/**
 * Ingests an NDJSON file line by line: valid events are appended in batches, each invalid line
 * is reported with its problems and counted as rejected (never silently dropped). Blank lines
 * are skipped. Progress is reported in bytes read.
 */
export async function ingestFile(
  store: EventStore,
  file: string,
  hooks: {
    onProgress?(doneBytes: number, totalBytes: number): void;
    onRejected?(line: number, problems: ErrorDetail[]): void;
  } = {},
) {
  const total = statSync(file).size;
  const input = createReadStream(file);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const result = { accepted: 0, duplicates: 0, rejected: 0 };
  let batch: IngestEvent[] = [];
  let lineNumber = 0;
  const flush = async () => {
    const ingested = await ingestEvents(store, batch, 'file');
    result.accepted += ingested.accepted;
    result.duplicates += ingested.duplicates;
    batch = [];
    hooks.onProgress?.(input.bytesRead, total);
  };
  for await (const line of lines) {
    lineNumber++;
    if (!line.trim()) continue;
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch (error) {
      result.rejected++;
      hooks.onRejected?.(lineNumber, [
        { location: '/', message: `is not JSON: ${(error as Error).message}` },
      ]);
      continue;
    }
    const problems = validateEvent(event);
    if (problems.length) {
      result.rejected++;
      hooks.onRejected?.(lineNumber, problems);
      continue;
    }
    batch.push(event as IngestEvent);
    if (batch.length >= BATCH) await flush();
  }
  if (batch.length) await flush();
  hooks.onProgress?.(total, total);
  return result;
}
