import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FileLine, readEventLines } from '../../src/kafka/file-events.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';

function file(text: string) {
  const path = join(mkdtempSync(join(tmpdir(), 'earshot-kafka-')), 'events.ndjson');
  writeFileSync(path, text);
  return path;
}

async function readAll(path: string) {
  const source = readEventLines(path);
  const lines: FileLine[] = [];
  for await (const line of source.lines) lines.push(line);
  return { lines, source };
}

describe('readEventLines', () => {
  it('yields valid events with their own text and invalid lines with their problems, by line number', async () => {
    const entity = JSON.stringify(entityEvent({ id: 'ent-1', name: 'Arm' }));
    const episode = JSON.stringify(episodeEvent({ id: 'ep-1' }));
    const { lines, source } = await readAll(file(`${entity}\n\n{oops\n${episode}\r\n{"type":"x"}\n`));
    expect(lines.map((line) => [line.lineNumber, line.ok])).toEqual([
      [1, true],
      [3, false],
      [4, true],
      [5, false],
    ]);
    expect(lines[0]).toMatchObject({ ok: true, text: entity });
    expect(lines[2]).toMatchObject({ ok: true, text: episode });
    expect(lines[1]).toMatchObject({
      ok: false,
      errors: [{ location: '/', message: expect.stringMatching(/^is not JSON/) }],
    });
    expect(lines[3]).toMatchObject({ ok: false, errors: [{ location: '/type' }] });
    expect(source.bytesRead()).toBe(source.totalBytes);
  });

  it('reads the first line after a UTF-8 byte order mark as the event it holds', async () => {
    const entity = JSON.stringify(entityEvent({ id: 'ent-bom', name: 'Bom' }));
    const { lines } = await readAll(file(`\uFEFF${entity}\n${entity}\n`));
    expect(lines.map((line) => [line.lineNumber, line.ok])).toEqual([
      [1, true],
      [2, true],
    ]);
    expect(lines[0]).toMatchObject({ ok: true, text: entity });
  });

  it('reads an empty file as no lines', async () => {
    const { lines, source } = await readAll(file(''));
    expect(lines).toEqual([]);
    expect(source.totalBytes).toBe(0);
  });
});
