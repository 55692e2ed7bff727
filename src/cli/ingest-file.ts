import type { ErrorDetail } from '../errors.ts';
import type { EventStore } from '../eventstore/port.ts';
import type { IngestEvent } from '../ingestion/events.ts';
import { ingestEvents } from '../ingestion/ingest.ts';
import { readEventLines } from '../kafka/file-events.ts';

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
  const reader = readEventLines(file);
  const result = { accepted: 0, duplicates: 0, rejected: 0 };
  let batch: IngestEvent[] = [];
  const flush = async () => {
    const ingested = await ingestEvents(store, batch, 'file');
    result.accepted += ingested.accepted;
    result.duplicates += ingested.duplicates;
    batch = [];
    hooks.onProgress?.(reader.bytesRead(), reader.totalBytes);
  };
  try {
    for await (const line of reader.lines) {
      if (!line.ok) {
        result.rejected++;
        hooks.onRejected?.(line.lineNumber, line.errors);
        continue;
      }
      batch.push(line.event);
      if (batch.length >= BATCH) await flush();
    }
    if (batch.length) await flush();
  } finally {
    reader.close();
  }
  hooks.onProgress?.(reader.totalBytes, reader.totalBytes);
  return result;
}
