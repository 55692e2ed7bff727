import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection, searchText } from '../../projections/entities/projection.ts';
import type { Db } from '../../src/db/db.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { entityRoutes } from '../../src/entities/routes.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { knowledgeRoutes } from '../../src/knowledge/routes.ts';
import { entityEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';

// An entity's names kept for fuzzy and substring search are cut at 2,000 characters
// (docs/knowledge-graph.md, "Entity search"): `ﷺ` folds to 18 characters, so these aliases
// would otherwise make one text of about 890,000 that every search scores.
const HUGE = 'ﷺ'.repeat(490);

describe.each(ENGINES)('entity names kept for search on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let get: (
    url: string,
  ) => Promise<{ status: number; body: { data: { id: string; match_quality?: string }[] } }>;
  let close: () => Promise<void>;

  beforeAll(async () => {
    // Migrated but for the cut's migration, so it also runs over a row written before it (the
    // lists read what later migrations made: person_companies, 0264).
    ({ db, drop } = await createDb(engine, { migrated: false }));
    await migrate(
      db,
      loadMigrations().filter((m) => m.id !== 257),
    );
    store = createPostgresEventStore(db);
    const app = await buildHttpApp({
      db,
      cursorKey: Buffer.alloc(32, 7),
      routes: [entityRoutes(), knowledgeRoutes()],
    });
    const { headers } = await createTenant(db);
    get = async (url) => {
      const response = await app.inject({ url, headers });
      return { status: response.statusCode, body: response.json() };
    };
    close = () => app.close();
  });
  afterAll(async () => {
    await close?.();
    await store?.close();
    await drop?.();
  });

  it('cuts them at 2,000 characters and still finds every alias exactly, and the first names by typo', async () => {
    await ingestEvents(store, [
      entityEvent({
        id: 'ent-huge',
        slug: 'zebulon-quartermaine',
        name: 'Zebulon Quartermaine',
        aliases: [...Array.from({ length: 98 }, (_, i) => `${i} ${HUGE}`), 'Findable Tail'],
      }),
      entityEvent({ id: 'ent-plain', slug: 'plain', name: 'Plain Person' }),
    ]);
    await catchUp(db, store, entitiesProjection);
    const { rows } = await db.query<{ n: number }>(
      "select char_length(search_text) as n from entities where id = 'ent-huge'",
    );
    expect(rows[0]!.n).toBe(2000);

    const search = async (url: string) => (await get(url)).body.data.map((e) => [e.id, e.match_quality]);
    expect(await search('/v1/entities/search?q=findable%20tail')).toEqual([['ent-huge', 'exact']]);
    expect(await search('/v1/entities/search?q=zebulon%20quartermain')).toEqual([['ent-huge', 'prefix']]);
    expect(await search('/v1/entities/search?q=zebulon%20quartremaine')).toEqual([['ent-huge', 'fuzzy']]);
    expect(await search('/v1/people?q=quartermaine')).toEqual([['ent-huge', 'fuzzy']]);
    expect(await search('/v1/people?q=plain%20persn')).toEqual([['ent-plain', 'fuzzy']]);
  });

  it('cuts a text written before the cut as the projection does, by characters', async () => {
    // Astral characters (two UTF-16 units each) at the cut: PostgreSQL counts characters.
    const names = [`a${'😀'.repeat(2500)}`, 'tail'];
    await db.query("update entities set search_text = $1 where id = 'ent-plain'", [names.join(' ')]);
    await migrate(db);
    const { rows } = await db.query<{ text: string }>(
      "select search_text as text from entities where id = 'ent-plain'",
    );
    expect(rows[0]!.text).toBe(searchText(names));
    expect(Array.from(rows[0]!.text)).toHaveLength(2000);
  });
});
