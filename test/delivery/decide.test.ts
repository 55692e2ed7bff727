import { describe, expect, it } from 'vitest';
import type { Alert, AlertState } from '../../src/alerts/alert.ts';
import {
  type AttemptOutcome,
  type DeliveryCommand,
  decide,
  type SendFacts,
  toNewEvents,
} from '../../src/delivery/decide.ts';
import {
  type DeliveryCreated,
  type DeliveryCreatedData,
  type DeliveryEvent,
  type DeliveryTarget,
  foldDelivery,
} from '../../src/delivery/delivery.ts';
import type { MatchedData } from '../../src/delivery/matched.ts';
import type { RetrySchedule } from '../../src/delivery/queue/schedule.ts';

const now = new Date('2026-03-01T12:00:00.000Z');
const schedule: RetrySchedule = { delaysMs: [5_000, 60_000], jitter: 0 };

function created(
  target: DeliveryTarget = { type: 'WEBHOOK', webhookConnectionId: 'wh1' },
  cadence: DeliveryCreatedData['cadence'] = 'REALTIME',
): DeliveryCreated {
  return {
    type: 'DeliveryCreated',
    data: {
      deliveryId: 'd1',
      type: cadence === 'REALTIME' ? 'alert.match' : 'alert.digest',
      alert: { id: 'a1', kind: 'ENTITY_MENTION', title: 'Nvidia', project_id: 'p1', organization_id: 'o1' },
      channel: target.type,
      target,
      cadence,
      matchIds: ['m1'],
      createdAt: '2026-03-01T11:59:00.000Z',
    },
  };
}

const alert: Alert = {
  id: 'a1',
  projectId: 'p1',
  organizationId: 'o1',
  title: 'Nvidia',
  description: null,
  kind: 'ENTITY_MENTION',
  deliveryCadence: 'REALTIME',
  entity: { entityType: 'COMPANY', entityId: 'e1' },
  notifications: [
    { type: 'WEBHOOK', webhookConnectionId: 'wh1' },
    { type: 'CHAT', chatConnectionId: 'c1', chatChannelId: 'C1' },
    { type: 'EMAIL', email: 'Ann@Example.com' },
  ],
  filters: {},
  disableTokens: {},
  createdAt: '2026-03-01T10:00:00.000Z',
  updatedAt: '2026-03-01T10:00:00.000Z',
  pausedAt: null,
  disabledAt: null,
  disabledBy: null,
  deletedAt: null,
};
const active: AlertState = { status: 'active', alert };
const match = { matchId: 'm1', relevance: 'incidental', roles: [], language: 'en' } as unknown as MatchedData;
const usable: SendFacts = { alert: active, matches: [match], connection: { status: 'usable' } };

const failure = (retryable: boolean): AttemptOutcome => ({
  ok: false,
  retryable,
  durationMs: 12,
  statusCode: 500,
  error: 'HTTP 500',
});
const success: AttemptOutcome = { ok: true, retryable: false, durationMs: 8, statusCode: 200 };
const attempt = (outcome: AttemptOutcome): DeliveryCommand => ({
  type: 'RecordAttempt',
  data: { outcome, now, schedule },
});
const screen = (facts: Partial<SendFacts>): DeliveryCommand => ({
  type: 'ScreenDelivery',
  data: { facts: { ...usable, ...facts }, now },
});

/** given events, when a command: then the events decided. */
const given = (...history: DeliveryEvent[]) => ({
  when: (command: DeliveryCommand) => decide(command, foldDelivery(history)),
});

describe('the delivery decider', () => {
  it('creates a delivery once: a repeated creation decides nothing', () => {
    const event = created();
    expect(given().when({ type: 'CreateDelivery', data: event.data })).toEqual([event]);
    expect(given(event).when({ type: 'CreateDelivery', data: event.data })).toEqual([]);
  });

  it('records a successful first attempt as DeliverySent', () => {
    expect(given(created()).when(attempt(success))).toEqual([
      {
        type: 'DeliverySent',
        data: {
          deliveryId: 'd1',
          attempt: 1,
          attemptedAt: now.toISOString(),
          durationMs: 8,
          statusCode: 200,
          sentAt: now.toISOString(),
        },
      },
    ]);
  });

  it('keeps the failed recipients of a partial success as the error message', () => {
    const [sent] = given(created()).when(attempt({ ...success, error: '1 of 2 recipients failed' }));
    expect(sent).toMatchObject({ type: 'DeliverySent', data: { errorMessage: '1 of 2 recipients failed' } });
  });

  it('schedules a retry after a retryable failure, at the delay the schedule names', () => {
    expect(given(created()).when(attempt(failure(true)))).toEqual([
      {
        type: 'DeliveryAttemptFailed',
        data: {
          deliveryId: 'd1',
          attempt: 1,
          attemptedAt: now.toISOString(),
          durationMs: 12,
          statusCode: 500,
          error: 'HTTP 500',
          retryable: true,
          nextAttemptAt: new Date(now.getTime() + 5_000).toISOString(),
        },
      },
    ]);
  });

  it('counts attempts from the stream: the second failure waits the second delay', () => {
    const first = given(created()).when(attempt(failure(true)));
    const [second] = given(created(), ...first).when(attempt(failure(true)));
    expect(second).toMatchObject({
      type: 'DeliveryAttemptFailed',
      data: { attempt: 2, nextAttemptAt: new Date(now.getTime() + 60_000).toISOString() },
    });
  });

  it('abandons a realtime webhook after the last retry', () => {
    const history: DeliveryEvent[] = [created()];
    for (let i = 0; i < schedule.delaysMs.length; i++)
      history.push(...given(...history).when(attempt(failure(true))));
    expect(given(...history).when(attempt(failure(true)))).toEqual([
      {
        type: 'DeliveryAttemptFailed',
        data: expect.objectContaining({ attempt: 3, retryable: true, error: 'HTTP 500' }),
      },
      {
        type: 'DeliveryAbandoned',
        data: {
          deliveryId: 'd1',
          reason: 'gave up after 3 attempts: HTTP 500',
          abandonedAt: now.toISOString(),
        },
      },
    ]);
  });

  it('fails an email, chat or digest delivery after the last retry instead of abandoning it', () => {
    for (const first of [
      created({ type: 'EMAIL', emails: ['ann@example.com'] }),
      created({ type: 'CHAT', chatConnectionId: 'c1', chatChannelId: 'C1' }),
      created({ type: 'WEBHOOK', webhookConnectionId: 'wh1' }, 'DAILY'),
    ]) {
      const history: DeliveryEvent[] = [first];
      for (let i = 0; i < schedule.delaysMs.length; i++)
        history.push(...given(...history).when(attempt(failure(true))));
      const events = given(...history).when(attempt(failure(true)));
      expect(events.map((e) => e.type)).toEqual(['DeliveryAttemptFailed', 'DeliveryFailed']);
    }
  });

  it('fails at once on a permanent failure, and a realtime webhook is abandoned', () => {
    const [failed, ending] = given(created()).when(attempt(failure(false)));
    expect(failed).toMatchObject({ type: 'DeliveryAttemptFailed', data: { retryable: false } });
    expect(failed!.data).not.toHaveProperty('nextAttemptAt');
    expect(ending).toEqual({
      type: 'DeliveryAbandoned',
      data: { deliveryId: 'd1', reason: 'permanent failure: HTTP 500', abandonedAt: now.toISOString() },
    });
    const email = created({ type: 'EMAIL', emails: ['ann@example.com'] });
    expect(given(email).when(attempt(failure(false)))[1]).toMatchObject({
      type: 'DeliveryFailed',
      data: { reason: 'permanent failure: HTTP 500' },
    });
  });

  it('keeps a retry-after hint with the failed attempt', () => {
    const [failed] = given(created()).when(attempt({ ...failure(true), retryAfterMs: 30_000 }));
    expect(failed).toMatchObject({ type: 'DeliveryAttemptFailed', data: { retryAfterMs: 30_000 } });
  });

  it('lets a delivery through when no SKIPPED rule applies', () => {
    expect(given(created()).when(screen({}))).toEqual([]);
    const email = created({ type: 'EMAIL', emails: ['ann@example.com'] });
    expect(given(email).when(screen({ connection: undefined }))).toEqual([]);
  });

  const skipped = (reason: string) => [
    { type: 'DeliverySkipped', data: { deliveryId: 'd1', reason, skippedAt: now.toISOString() } },
  ];
  const alertIn = (status: 'deleted' | 'paused' | 'disabled'): AlertState => ({ status, alert });

  it.each([
    ['the alert does not exist', { alert: { status: 'initial' } satisfies AlertState }],
    ['the alert was deleted before the send', { alert: alertIn('deleted') }],
    ['the alert was paused before the send', { alert: alertIn('paused') }],
    ['the alert was disabled by a recipient before the send', { alert: alertIn('disabled') }],
    [
      'the alert no longer notifies this destination',
      { alert: { status: 'active', alert: { ...alert, notifications: [] } } satisfies AlertState },
    ],
    ['none of its matches could be read', { matches: [] }],
    [
      "the match no longer passes the alert's filters",
      {
        alert: { status: 'active', alert: { ...alert, filters: { languages: ['de'] } } } satisfies AlertState,
      },
    ],
    ['webhook connection wh1 does not exist', { connection: { status: 'missing' } }],
    ['webhook connection wh1 was revoked', { connection: { status: 'revoked' } }],
  ] as const)('skips a realtime webhook delivery: %s', (reason, facts) => {
    expect(given(created()).when(screen(facts as Partial<SendFacts>))).toEqual(skipped(reason));
  });

  it('skips a chat delivery whose connection is missing or deleted', () => {
    const chat = created({ type: 'CHAT', chatConnectionId: 'c1', chatChannelId: 'C1' });
    expect(given(chat).when(screen({ connection: { status: 'missing' } }))).toEqual(
      skipped('chat connection c1 does not exist'),
    );
    expect(given(chat).when(screen({ connection: { status: 'deleted' } }))).toEqual(
      skipped('chat connection c1 was deleted'),
    );
  });

  it('skips an email delivery none of whose recipients is still on the alert', () => {
    const email = created({ type: 'EMAIL', emails: ['bob@example.com'] });
    expect(given(email).when(screen({ connection: undefined }))).toEqual(
      skipped('no recipient of this delivery is still on the alert'),
    );
  });

  it("does not re-apply the alert's filters to a digest", () => {
    const digest = created({ type: 'WEBHOOK', webhookConnectionId: 'wh1' }, 'DAILY');
    const strict: AlertState = { status: 'active', alert: { ...alert, filters: { languages: ['de'] } } };
    expect(given(digest).when(screen({ alert: strict }))).toEqual([]);
  });

  it('skips on request with the reason given', () => {
    expect(given(created()).when({ type: 'SkipDelivery', data: { reason: 'by hand', now } })).toEqual(
      skipped('by hand'),
    );
  });

  it('fails a digest superseded by the next one, naming it', () => {
    const digest = created({ type: 'WEBHOOK', webhookConnectionId: 'wh1' }, 'DAILY');
    const retrying = given(digest).when(attempt(failure(true)));
    expect(given(digest, ...retrying).when({ type: 'SupersedeDigest', data: { by: 'd2', now } })).toEqual([
      {
        type: 'DeliveryFailed',
        data: {
          deliveryId: 'd1',
          reason: 'not delivered within its window; its matches were selected again by digest d2',
          failedAt: now.toISOString(),
        },
      },
    ]);
  });

  it('gives up a delivery whose attempts crashed, like a spent budget: ABANDONED for a realtime webhook, else FAILED', () => {
    const giveUp: DeliveryCommand = { type: 'GiveUpCrashed', data: { crashes: 13, now } };
    const reason = 'attempt_crashed: gave up after the attempt crashed 13 times in a row';
    const retrying = given(created()).when(attempt(failure(true)));
    expect(given(created(), ...retrying).when(giveUp)).toEqual([
      { type: 'DeliveryAbandoned', data: { deliveryId: 'd1', reason, abandonedAt: now.toISOString() } },
    ]);
    for (const delivery of [
      created({ type: 'EMAIL', emails: ['ann@example.com'] }),
      created({ type: 'WEBHOOK', webhookConnectionId: 'wh1' }, 'DAILY'),
    ]) {
      const ending = given(delivery).when(giveUp);
      expect(ending).toEqual([
        { type: 'DeliveryFailed', data: { deliveryId: 'd1', reason, failedAt: now.toISOString() } },
      ]);
      expect(foldDelivery([delivery, ...ending])).toMatchObject({
        status: 'failed',
        delivery: { attempts: 0, lastError: reason },
      });
      expect(toNewEvents(ending)[0]!.id).toBe(toNewEvents(given(delivery).when(attempt(success)))[0]!.id);
    }
  });

  it('decides nothing for a delivery that has ended, whatever the command (idempotent repeats)', () => {
    const sent = given(created()).when(attempt(success));
    const ended = [created(), ...sent];
    expect(given(...ended).when(attempt(success))).toEqual([]);
    expect(given(...ended).when(attempt(failure(true)))).toEqual([]);
    expect(given(...ended).when(screen({ alert: alertIn('paused') }))).toEqual([]);
    expect(given(...ended).when({ type: 'SupersedeDigest', data: { by: 'd2', now } })).toEqual([]);
    expect(given(...ended).when({ type: 'SkipDelivery', data: { reason: 'late', now } })).toEqual([]);
    expect(given(...ended).when({ type: 'GiveUpCrashed', data: { crashes: 13, now } })).toEqual([]);
    expect(given(...ended).when({ type: 'CreateDelivery', data: created().data })).toEqual([]);
  });

  it('decides nothing for a delivery that was never created', () => {
    expect(given().when(attempt(success))).toEqual([]);
    expect(given().when(screen({}))).toEqual([]);
  });

  it('gives every ending the same event id, so a delivery ends at most once in the store', () => {
    const sent = toNewEvents(given(created()).when(attempt(success)));
    const skip = toNewEvents(given(created()).when(screen({ matches: [] })));
    const retry = toNewEvents(given(created()).when(attempt(failure(true))));
    expect(sent[0]!.id).toBe(skip[0]!.id);
    expect(retry[0]!.id).not.toBe(sent[0]!.id);
    expect(toNewEvents([created()])[0]!.id).toBe(toNewEvents([created()])[0]!.id);
  });

  it('folds the decided events into the status docs/delivery.md names', () => {
    const failed = given(created()).when(attempt(failure(true)));
    expect(foldDelivery([created(), ...failed])).toMatchObject({
      status: 'retrying',
      delivery: {
        attempts: 1,
        lastError: 'HTTP 500',
        nextAttemptAt: new Date(now.getTime() + 5_000).toISOString(),
      },
    });
    const history = [created(), ...failed, ...given(created(), ...failed).when(attempt(success))];
    expect(foldDelivery(history)).toMatchObject({ status: 'sent', delivery: { attempts: 2 } });
    expect(foldDelivery(history).status === 'sent' && foldDelivery(history)).not.toHaveProperty(
      'delivery.lastError',
    );
  });
});
