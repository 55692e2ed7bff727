import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ErrorDetail } from '../errors.ts';
import type { IngestEvent } from '../ingestion/events.ts';
import { validateEvent } from '../ingestion/validate.ts';

const BOM = '\uFEFF';

export type FileLine =
  | { lineNumber: number; ok: true; event: IngestEvent; text: string }
  | { lineNumber: number; ok: false; errors: ErrorDetail[] };

/**
 * The non-blank lines of an NDJSON file, each validated: the one reader of `earshot ingest` (with
 * or without Kafka). A leading UTF-8 byte order mark (editors on Windows write one) is not part of
 * the first line. `bytesRead` and `totalBytes` report progress; `close` releases the file when
 * reading stops early.
 */
export function readEventLines(file: string) {
  const totalBytes = statSync(file).size;
  const input = createReadStream(file);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  async function* read(): AsyncGenerator<FileLine> {
    let lineNumber = 0;
    for await (const line of lines) {
      lineNumber++;
      const text = lineNumber === 1 && line.startsWith(BOM) ? line.slice(BOM.length) : line;
      if (!text.trim()) continue;
      let event: unknown;
      try {
        event = JSON.parse(text);
      } catch (error) {
        yield {
          lineNumber,
          ok: false,
          errors: [{ location: '/', message: `is not JSON: ${(error as Error).message}` }],
        };
        continue;
      }
      const errors = validateEvent(event);
      if (errors.length) yield { lineNumber, ok: false, errors };
      else yield { lineNumber, ok: true, event: event as IngestEvent, text };
    }
  }
  return {
    lines: read(),
    totalBytes,
    bytesRead: () => input.bytesRead,
    close() {
      lines.close();
      input.destroy();
    },
  };
}
