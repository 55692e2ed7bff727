import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPeople } from '../../projections/entities/knowledge.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { createCursorCodec } from '../../src/http/cursor.ts';
import { knowledgeRoutes } from '../../src/knowledge/routes.ts';
import { type CatalogHarness, catalogHarness } from '../catalog/support.ts';
import { entityEvent } from '../fixtures/events.ts';
import { createTenant } from '../support/platform.ts';
import { rowsRead } from '../support/rows-read.ts';

// What the people and company lists read (docs/knowledge-graph.md): company_id reads the people
// who hold or held the company, through the index of person_companies (migration 0264), not every
// person; a page without q after a cursor starts at its cursor's name ("Deep pages").

const PEOPLE = 3000;

const CURSOR_KEY = Buffer.alloc(32, 7);

describe('what the people and company lists read', () => {
  let h: CatalogHarness;
  let app: FastifyInstance;
  let headers: Record<string, string>;

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    await h.ingest([
      ...Array.from({ length: PEOPLE }, (_, p) =>
        entityEvent({
          id: `person-${p}`,
          slug: `person-${p}`,
          name: `Person ${String(p).padStart(4, '0')}`,
          person: {
            company: `Company ${p % 500}`,
            roles: [{ company: `Old Company ${p % 300}` }, { company: `Older Company ${p % 700}` }],
          },
        }),
      ),
      entityEvent({ id: 'p-now', name: 'Ada Now', person: { company: 'ACME' } }),
      entityEvent({ id: 'p-current', name: 'Bea Current', person: { current_role: { company: 'Acme' } } }),
      entityEvent({
        id: 'p-past',
        name: 'Cy Past',
        person: { roles: [{ company: 'acme' }, { title: 'Board' }] },
      }),
      entityEvent({
        id: 'c-acme',
        name: 'Acme',
        entity_type: 'COMPANY',
        company: { domain: 'acme.example' },
      }),
      ...Array.from({ length: 150 }, (_, c) =>
        entityEvent({ id: `co-${c}`, name: `Firm ${c % 40}`, entity_type: 'COMPANY' }),
      ),
    ]);
    await h.db.query('vacuum analyze entities');
    app = await buildHttpApp({ db: h.db, cursorKey: CURSOR_KEY, routes: [knowledgeRoutes()] });
    ({ headers } = await createTenant(h.db));
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await h?.close();
  });

  const people = (companyNames: string[]) =>
    rowsRead(h.db, 'entities', (db) => listPeople(db, { q: null, companyNames, limit: 26, offset: 0 }));

  it('reads only the people who hold or held the company, by any of its names and in any case', async () => {
    const { read, answer } = await people(['acme', 'acme.example', 'c-acme']);
    expect(answer.map((p) => p.id)).toEqual(['p-now', 'p-current', 'p-past']);
    expect(read).toBeLessThanOrEqual(3);
    const past = await people(['old company 7']);
    expect(past.answer).toHaveLength(10);
    expect(past.read).toBeLessThanOrEqual(10);
  });

  it('reads no person for a company nobody holds', async () => {
    const { read, answer } = await people(['nobody inc']);
    expect(answer).toEqual([]);
    expect(read).toBe(0);
  });

  /** Every page of a list, following its cursors from `cursor` on. */
  async function pages(url: string, query: Record<string, string>, cursor?: string) {
    const ids: string[] = [];
    for (let next = cursor; ; ) {
      const res = await app.inject({ url, headers, query: { ...query, ...(next ? { cursor: next } : {}) } });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      ids.push(...body.data.map((item: { id: string; entity_id?: string }) => item.entity_id ?? item.id));
      if (!body.has_more) return ids;
      next = body.cursor;
    }
  }

  it('pages through people and companies without q in name order, each page read from its cursor', async () => {
    const everyone = await listPeople(h.db, { q: null, companyNames: null, limit: 10_000, offset: 0 });
    expect(await pages('/v1/people', { limit: '100' })).toEqual(everyone.map((p) => p.id));
    const firms = await pages('/v1/companies', { limit: '7' });
    expect(firms).toHaveLength(151);
    const { rows } = await h.db.query<{ id: string }>(
      "select id from entities where entity_type = 'COMPANY' order by name, id",
    );
    expect(firms).toEqual(rows.map((r) => r.id));
    // a cursor 2,000 people deep reads the page, not the 2,000 before it
    const at = everyone[1999]!;
    const { read, answer } = await rowsRead(h.db, 'entities', (db) =>
      listPeople(db, {
        q: null,
        companyNames: null,
        limit: 26,
        offset: 0,
        after: { name: at.name, id: at.id },
      }),
    );
    expect(answer.map((p) => p.id)).toEqual(everyone.slice(2000, 2026).map((p) => p.id));
    expect(read).toBeLessThanOrEqual(26);
  });

  it('still takes a cursor that holds only an offset (issued before the keyset)', async () => {
    const everyone = await listPeople(h.db, { q: null, companyNames: null, limit: 10_000, offset: 0 });
    const cursor = createCursorCodec(CURSOR_KEY).encode({ f: { q: null, c: null }, o: 2900 });
    expect(await pages('/v1/people', { limit: '30' }, cursor)).toEqual(everyone.slice(2900).map((p) => p.id));
  });
});
