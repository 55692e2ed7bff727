import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/app.ts';
import { createLogger } from '../../src/service.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

describe('request logs', () => {
  let testDb: TestDb;
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });

  beforeAll(async () => {
    testDb = await createTestDb();
  });
  afterAll(async () => {
    await testDb.drop();
  });

  it('never carry an API key or a disable token given in the query string', async () => {
    const app = await buildHttpApp({
      db: testDb.db,
      cursorKey: Buffer.alloc(32),
      routes: [],
      logger: createLogger({ logLevel: 'info' }, sink),
    });
    try {
      const secretKey = `ek_${'A'.repeat(16)}_${'s'.repeat(40)}`;
      await app.inject({ url: `/v1/anything?limit=5&api-key=${secretKey}` });
      await app.inject({ url: '/v1/alerts/disable?token=very-secret-token' });
      const logged = lines.join('\n');
      expect(logged).toContain('api-key=[redacted]');
      expect(logged).toContain('token=[redacted]');
      expect(logged).toContain('limit=5');
      expect(logged).not.toContain(secretKey);
      expect(logged).not.toContain('very-secret-token');
    } finally {
      await app.close();
    }
  });
});
