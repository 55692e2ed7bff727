import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertsProjection } from '../../projections/alerts/projection.ts';
import { findAlert, findDisableToken, listAlerts } from '../../projections/alerts/queries.ts';
import { alertStream, loadAlert } from '../../src/alerts/alert.ts';
import { hashDisableToken } from '../../src/alerts/disable-tokens.ts';
import { alertResource } from '../../src/alerts/resource.ts';
import { createProject, verifyEmail } from '../../src/platform/organizations.ts';
import { ENGINES } from '../support/db.ts';
import { type AlertsFixture, alertBody, alertsFixture } from './support.ts';

const EMAILS = ['ops@example.com', 'a@example.com', 'b@example.com', 'c@example.com'];

/** One PATCH body: any mix of the updatable fields, including pause/resume. */
const patchArbitrary = fc.record(
  {
    title: fc.constantFrom('Alpha', 'Beta', 'Gamma'),
    description: fc.constantFrom(null, 'one', 'two'),
    delivery_cadence: fc.constantFrom('REALTIME', 'DAILY', 'WEEKLY'),
    notifications: fc
      .subarray(EMAILS, { minLength: 1 })
      .map((emails) => emails.map((email) => ({ type: 'EMAIL', email }))),
    filters: fc.record(
      {
        languages: fc.subarray(['en', 'de', 'fr']),
        relevance: fc.constantFrom('RELEVANT', 'ALL'),
        source_popularity: fc.subarray(['TOP_PODCAST', 'VERY_POPULAR', 'POPULAR']),
        speaker_roles: fc.subarray(['GUEST', 'panelist', 'Caller']),
      },
      { requiredKeys: [] },
    ),
    is_active: fc.boolean(),
  },
  { requiredKeys: [] },
);

const folded = (f: AlertsFixture, id: string) => loadAlert(f.store, id);

describe.each(ENGINES)('the alerts read model on %s', (engine) => {
  let f: AlertsFixture;
  beforeAll(async () => {
    f = await alertsFixture(engine);
    await f.setAlertPacks(100);
    for (const email of EMAILS) await verifyEmail(f.db, f.caller.organizationId, email);
  });
  afterAll(async () => {
    await f.close();
  });

  it('equals the fold of each alert’s events after any sequence of PATCHes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(patchArbitrary, { maxLength: 8 }),
        fc.boolean(),
        async (patches, deleteAtEnd) => {
          const created = await f.service.create(f.caller, alertBody({ kind: 'PODCAST_SPEAKER' }));
          for (const patch of patches) await f.service.update(f.caller, created.id, patch);
          if (deleteAtEnd) await f.service.delete(f.caller, created.id);
          await f.project();
          const { state, revision } = await folded(f, created.id);
          const stored = await findAlert(f.db, created.id);
          if (state.status === 'initial' || !stored) throw new Error('alert missing');
          expect(stored.status).toBe(state.status);
          expect(stored.revision).toBe(revision);
          expect(stored.alert).toEqual(state.alert);
          if (state.status !== 'deleted' && stored.status !== 'deleted') {
            expect(alertResource(stored.alert, stored.status)).toEqual(
              alertResource(state.alert, state.status),
            );
            expect(alertResource(stored.alert, stored.status)).toEqual(
              await f.service.get(f.caller, created.id),
            );
          }
        },
      ),
      { numRuns: engine === 'postgres' ? 30 : 15 },
    );
  });

  it('skips events it has already folded, so a replayed batch changes nothing', async () => {
    const alert = await f.service.create(f.caller, alertBody());
    await f.service.update(f.caller, alert.id, { title: 'Renamed' });
    await f.project();
    const before = await findAlert(f.db, alert.id);
    const events = await f.store.readStream(alertStream(alert.id));
    // Replay the create alone: the row must not go back to the old title.
    await f.db.transaction((tx) => alertsProjection.apply(tx, events.slice(0, 1)));
    await f.db.transaction((tx) => alertsProjection.apply(tx, events));
    expect(await findAlert(f.db, alert.id)).toEqual(before);
    expect(before?.alert.title).toBe('Renamed');
  });

  it('keeps one token row per current email recipient', async () => {
    const alert = await f.service.create(
      f.caller,
      alertBody({
        notifications: [
          { type: 'EMAIL', email: 'a@example.com' },
          { type: 'EMAIL', email: 'b@example.com' },
        ],
      }),
    );
    await f.project();
    const { state } = await folded(f, alert.id);
    if (state.status === 'initial') throw new Error('missing');
    const tokenA = state.alert.disableTokens['a@example.com']!;
    const tokenB = state.alert.disableTokens['b@example.com']!;
    // The stored hash is the hash of the token derived for that recipient.
    expect(hashDisableToken(f.tokens.tokenFor(alert.id, 'a@example.com', tokenA.tokenId))).toBe(
      tokenA.tokenSha256,
    );
    expect(await findDisableToken(f.db, tokenA.tokenSha256)).toEqual({
      alertId: alert.id,
      email: 'a@example.com',
      tokenId: tokenA.tokenId,
    });

    await f.service.update(f.caller, alert.id, {
      notifications: [{ type: 'EMAIL', email: 'a@example.com' }],
    });
    await f.project();
    expect(await findDisableToken(f.db, tokenB.tokenSha256)).toBeNull();
    expect(await findDisableToken(f.db, tokenA.tokenSha256)).not.toBeNull();
  });

  it('lists a project’s alerts newest first in keyset pages, without deleted ones', async () => {
    const other = await createProject(f.db, { organizationId: f.caller.organizationId, name: 'Listing' });
    const caller = { projectId: other.id, organizationId: f.caller.organizationId };
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await f.service.create(caller, alertBody({ title: `n${i}` }))).id);
    await f.service.delete(caller, ids[3]!);
    await f.project();
    const seen: string[] = [];
    let after: { createdAt: string; id: string } | undefined;
    for (;;) {
      const page = await listAlerts(f.db, other.id, { limit: 2, after });
      seen.push(...page.map((p) => p.alert.id));
      if (page.length < 2) break;
      const last = page.at(-1)!;
      after = { createdAt: last.alert.createdAt, id: last.alert.id };
    }
    expect(seen).toEqual(ids.filter((_, i) => i !== 3).reverse());
  });

  it('rebuilds to the same rows after reset', async () => {
    await f.project();
    const snapshot = async () =>
      (await f.db.query('select * from alerts order by id')).rows.map((row) => JSON.stringify(row));
    const before = await snapshot();
    await f.db.transaction((tx) => alertsProjection.reset(tx));
    expect(await snapshot()).toEqual([]);
    await f.project({ fromStart: true });
    expect(await snapshot()).toEqual(before);
  });
});
