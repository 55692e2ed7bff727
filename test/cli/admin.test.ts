import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { episodeStream } from '../../src/ingestion/events.ts';
import { KeyVerifier } from '../../src/platform/keys.ts';
import { BUILTIN_MODEL } from '../../src/search/semantic/word-vectors.ts';
import { parkEvent } from '../../src/subscriptions/parked.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { runCli, schemaUrl } from '../support/cli.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

describe('earshot admin commands', () => {
  let testDb: TestDb;
  let env: Record<string, string>;
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, '--json'], env);
    return { ...result, json: result.code === 0 ? JSON.parse(result.stdout) : undefined };
  };

  beforeAll(async () => {
    testDb = await createTestDb({ migrated: false });
    env = { DATABASE_URL: schemaUrl(testDb.schema), DATA_DIR: mkdtempSync(join(tmpdir(), 'earshot-cli-')) };
  });
  afterAll(async () => {
    await testDb.drop();
  });

  it('migrates and prints the applied migrations as one JSON object', async () => {
    const first = await cli('migrate');
    expect(first.code).toBe(0);
    expect(first.stdout.trim().split('\n')).toHaveLength(1);
    expect(first.json.applied).toContain('0001_platform');
    expect((await cli('migrate')).json).toEqual({ applied: [] });
  });

  it('creates an organization, changes its plan and add-ons, and verifies an email', async () => {
    const org = await cli('org', 'create', '--name', 'Acme', '--plan', 'team');
    expect(org.json).toMatchObject({ name: 'Acme', plan: 'TEAM', alert_packs: 0 });
    expect((await cli('org', 'set-plan', '--org', org.json.id, '--plan', 'BUSINESS')).json.plan).toBe(
      'BUSINESS',
    );
    expect((await cli('org', 'add-on', '--org', org.json.id, '--quantity', '2')).json.alert_packs).toBe(2);
    const email = await cli('org', 'verify-email', '--org', org.json.id, '--email', 'Ops@Example.com');
    expect(email.json).toMatchObject({ email: 'ops@example.com' });
    expect(Date.parse(email.json.verified_at)).not.toBeNaN();
  });

  it('creates a project with a base62 id and a key that verifies, and revokes it', async () => {
    const org = await cli('org', 'create', '--name', 'Beta', '--plan', 'TEAM');
    const project = await cli('project', 'create', '--org', org.json.id, '--name', 'Main');
    expect(project.json.id).toMatch(/^[0-9A-Za-z]{22}$/);
    const key = await cli('key', 'create', '--project', project.json.id);
    expect(key.json.key).toMatch(/^ek_/);
    const verifier = new KeyVerifier(testDb.db, 0);
    expect(await verifier.verify(key.json.key)).toMatchObject({
      projectId: project.json.id,
      kind: 'project',
    });
    const revoked = await cli('key', 'revoke', '--id', key.json.id);
    expect(revoked.json).toMatchObject({ id: key.json.id });
    expect(await verifier.verify(key.json.key)).toBeNull();
    const stored = await testDb.db.query<{ secret_sha256: Buffer }>(
      'select secret_sha256 from api_keys where id = $1',
      [key.json.id],
    );
    expect(stored.rows[0]!.secret_sha256.toString('utf8')).not.toContain(key.json.key.slice(-40));
  });

  it('prints the error as the one JSON object with --json', async () => {
    const result = await runCli(['org', 'set-plan', '--org', 'nope', '--plan', 'TEAM', '--json'], env);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      error: { message: 'No organization nope.', code: 'organization_not_found' },
    });
  });

  it('fails with one line on stderr and a non-zero exit for a bad plan, a missing option or an unknown org', async () => {
    for (const args of [
      ['org', 'create', '--name', 'X', '--plan', 'GOLD'],
      ['org', 'set-plan', '--org', 'nope', '--plan', 'TEAM'],
      ['key', 'create'],
    ]) {
      const result = await runCli([...args, '--json'], env);
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^earshot: /);
    }
  });

  it('connects a chat workspace with its bot token stored encrypted', async () => {
    const org = await cli('org', 'create', '--name', 'Chat', '--plan', 'TEAM');
    const project = await cli('project', 'create', '--org', org.json.id, '--name', 'Main');
    const added = await cli(
      'chat',
      'add',
      '--project',
      project.json.id,
      '--team-id',
      'T0ACME',
      '--team-name',
      'Acme',
      '--bot-token',
      'xoxb-secret-123',
    );
    expect(added.json).toMatchObject({ project_id: project.json.id, team_id: 'T0ACME', team_name: 'Acme' });
    expect(added.json.id).toMatch(/^[0-9A-Za-z]+$/);
    expect(added.stdout).not.toContain('xoxb-secret-123');
    const { rows } = await testDb.db.query<{ sealed: string }>(
      'select bot_token_sealed as sealed from chat_connections where id = $1',
      [added.json.id],
    );
    expect(rows[0]!.sealed).not.toContain('xoxb-secret-123');
    const missing = await runCli(
      [
        'chat',
        'add',
        '--project',
        'nope',
        '--team-id',
        'T',
        '--team-name',
        'N',
        '--bot-token',
        'x',
        '--json',
      ],
      env,
    );
    expect(missing.code).toBe(1);
  });

  it('ingests an NDJSON file, counting duplicates and rejecting invalid lines with their reasons', async () => {
    const episode = episodeEvent();
    const bad = episodeEvent();
    (bad.episode as { duration_seconds: unknown }).duration_seconds = 'long';
    const file = join(env.DATA_DIR!, 'events.ndjson');
    writeFileSync(
      file,
      [entityEvent({ id: 'ent-a', name: 'A' }), episode, episode, bad]
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n\n{not json\n',
    );
    const result = await runCli(['ingest', file, '--json'], env);
    expect(JSON.parse(result.stdout)).toEqual({ accepted: 2, duplicates: 1, rejected: 2 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 4: /episode/duration_seconds');
    expect(result.stderr).toContain('line 6: / is not JSON');
    const store = createPostgresEventStore(testDb.db);
    expect(await store.readStream(episodeStream(episode.episode.id))).toHaveLength(1);
    await store.close();
  });

  it('ingests the first line of a file saved with a UTF-8 byte order mark', async () => {
    const episode = episodeEvent();
    const file = join(env.DATA_DIR!, 'bom.ndjson');
    writeFileSync(file, `\uFEFF${JSON.stringify(episode)}\n`);
    const result = await runCli(['ingest', file, '--json'], env);
    expect(JSON.parse(result.stdout)).toEqual({ accepted: 1, duplicates: 0, rejected: 0 });
    expect(result.code).toBe(0);
    const store = createPostgresEventStore(testDb.db);
    expect(await store.readStream(episodeStream(episode.episode.id))).toHaveLength(1);
    await store.close();
  });

  it('rebuilds the projections and reports the events applied', async () => {
    const result = await cli('projections', 'rebuild', 'entities');
    expect(result.json).toEqual({ rebuilt: ['entities'], events: 1 });
    const { rows } = await testDb.db.query<{ id: string }>('select id from entities');
    expect(rows.map((row) => row.id)).toEqual(['ent-a']);
    expect((await runCli(['projections', 'rebuild', 'nonesuch', '--json'], env)).code).toBe(1);
  });

  it('rebuilds the embedder by name, which re-embeds every transcript (going back to a model used before)', async () => {
    const name = `embedder:${BUILTIN_MODEL}`;
    const result = await cli('projections', 'rebuild', name);
    expect(result.json).toMatchObject({ rebuilt: [name] });
    expect(result.json.events).toBeGreaterThan(0);
    const { rows } = await testDb.db.query<{ model: string }>(
      'select distinct model from passage_embeddings',
    );
    expect(rows).toEqual([{ model: BUILTIN_MODEL }]);
  }, 60_000);

  it('shows parked events in projections status and replays them with retry-parked', async () => {
    const store = createPostgresEventStore(testDb.db);
    const [event] = (await store.readAll({ eventTypes: entitiesProjection.eventTypes })).events;
    await store.close();
    await parkEvent(testDb.db, 'entities', event!, new Error('was failing'), 5);

    const status = await cli('projections', 'status');
    expect(status.code).toBe(0);
    const entities = status.json.subscriptions.find((s: { name: string }) => s.name === 'entities');
    expect(entities).toMatchObject({ mode: 'transactional', parked: 1 });
    expect(status.json.subscriptions.map((s: { name: string }) => s.name)).toEqual(
      expect.arrayContaining(['matches', 'consumer:matcher', 'consumer:backfill', 'delivery-fanout']),
    );

    const retried = await cli('projections', 'retry-parked', 'entities');
    expect(retried.json).toEqual({ retried: { entities: { replayed: 1, failing: 0, missing: 0 } } });
    expect((await cli('projections', 'status')).json.subscriptions).toContainEqual(
      expect.objectContaining({ name: 'entities', parked: 0 }),
    );
    expect((await runCli(['projections', 'retry-parked', 'nonesuch', '--json'], env)).code).toBe(1);
  });
});
