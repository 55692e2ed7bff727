import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPeople } from '../../projections/entities/knowledge.ts';
import { type CatalogHarness, catalogHarness } from '../catalog/support.ts';
import { entityEvent } from '../fixtures/events.ts';
import { rowsRead } from '../support/rows-read.ts';

// GET /v1/people with company_id reads the people who hold or held the company, through the index
// of person_companies (migration 0264; docs/knowledge-graph.md, "What a list reads"), not every person.

const PEOPLE = 3000;

describe('people of a company', () => {
  let h: CatalogHarness;

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
    ]);
    await h.db.query('vacuum analyze entities');
  }, 120_000);
  afterAll(() => h?.close());

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
});
