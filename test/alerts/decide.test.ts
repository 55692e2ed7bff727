import { describe, expect, it } from 'vitest';
import { type AlertEvent, type AlertState, foldAlert, initialAlertState } from '../../src/alerts/alert.ts';
import { type AlertCommand, decide, type PlanFacts, type ReferenceFacts } from '../../src/alerts/decide.ts';
import { type AlertDraft, parseAlertDraft, parseAlertPatch } from '../../src/alerts/input.ts';
import { type EarshotError, NotFoundError, PlanError, ValidationError } from '../../src/errors.ts';

const now = new Date('2026-11-20T10:00:00.000Z');
const later = new Date('2026-11-20T11:00:00.000Z');
const ALERT = 'alert1';
const PROJECT = 'projectA';
const ORG = 'org1';
const entity = { entityType: 'PERSON', entityId: 'jensen-huang' } as const;

const passing: ReferenceFacts = {
  entity,
  unverifiedEmails: [],
  unusableWebhookConnections: [],
  unusableChatConnections: [],
};
const team: PlanFacts = { plan: 'TEAM', alertPacks: 0, activeAlerts: 0 };
const token = (email: string) => ({ email, tokenId: `id-${email}`, tokenSha256: `sha-${email}` });

const body = (overrides: Record<string, unknown> = {}) => ({
  title: 'Jensen on podcasts',
  entities: [{ entity_type: 'PERSON', entity_id: 'jensen-huang' }],
  notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
  ...overrides,
});

function create(
  draft: AlertDraft,
  options: { references?: ReferenceFacts; plan?: PlanFacts } = {},
): AlertCommand {
  return {
    type: 'CreateAlert',
    data: {
      alertId: ALERT,
      projectId: PROJECT,
      organizationId: ORG,
      draft,
      references: options.references ?? passing,
      plan: options.plan ?? team,
      issuedTokens: draft.notifications.flatMap((n) => (n.type === 'EMAIL' ? [token(n.email)] : [])),
      now,
    },
  };
}

function update(
  patchBody: Record<string, unknown>,
  options: { references?: Partial<ReferenceFacts>; plan?: PlanFacts; projectId?: string } = {},
): AlertCommand {
  const patch = parseAlertPatch(patchBody);
  return {
    type: 'UpdateAlert',
    data: {
      alertId: ALERT,
      projectId: options.projectId ?? PROJECT,
      patch,
      references: { ...passing, entity: patch.entity ? entity : undefined, ...options.references },
      plan: options.plan ?? team,
      issuedTokens: (patch.notifications ?? []).flatMap((n) => (n.type === 'EMAIL' ? [token(n.email)] : [])),
      now: later,
    },
  };
}

const created = (overrides: Record<string, unknown> = {}): AlertEvent[] =>
  decide(create(parseAlertDraft(body(overrides))), initialAlertState());

/** given events, when command, then: the events decided or the error thrown. */
function given(events: AlertEvent[]) {
  const state: AlertState = foldAlert(events);
  return {
    when: (command: AlertCommand) => ({
      thenEvents: (expected: AlertEvent[]) => expect(decide(command, state)).toEqual(expected),
      thenFails: (error: new (...args: never[]) => EarshotError, errorCode: string) => {
        let thrown: unknown;
        try {
          decide(command, state);
        } catch (caught) {
          thrown = caught;
        }
        expect(thrown).toBeInstanceOf(error);
        expect((thrown as EarshotError).errorCode).toBe(errorCode);
        return thrown as EarshotError;
      },
    }),
  };
}

const expectParseError = (fn: () => unknown, errorCode: string, location?: string) => {
  let thrown: unknown;
  try {
    fn();
  } catch (caught) {
    thrown = caught;
  }
  expect(thrown).toBeInstanceOf(ValidationError);
  expect((thrown as ValidationError).errorCode).toBe(errorCode);
  if (location) expect((thrown as ValidationError).errors.map((e) => e.location)).toContain(location);
};

describe('creating an alert', () => {
  it('records the normalised configuration with defaults and a token per email recipient', () => {
    given([])
      .when(create(parseAlertDraft(body())))
      .thenEvents([
        {
          type: 'AlertCreated',
          data: {
            alertId: ALERT,
            projectId: PROJECT,
            organizationId: ORG,
            title: 'Jensen on podcasts',
            description: null,
            kind: 'ENTITY_MENTION',
            deliveryCadence: 'REALTIME',
            entity,
            notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
            filters: {},
            disableTokens: [token('ops@example.com')],
            createdAt: now.toISOString(),
          },
        },
      ]);
  });

  it('creates a paused alert when is_active is false', () => {
    const events = created({ is_active: false });
    expect(events.map((e) => e.type)).toEqual(['AlertCreated', 'AlertPaused']);
    expect(foldAlert(events).status).toBe('paused');
  });

  it('stores the entity the directory resolved, not the one requested', () => {
    const canonical = { entityType: 'PERSON', entityId: 'ent_123' } as const;
    const [event] = decide(
      create(parseAlertDraft(body()), { references: { ...passing, entity: canonical } }),
      initialAlertState(),
    );
    expect(event?.type === 'AlertCreated' && event.data.entity).toEqual(canonical);
  });

  it('rejects an entity that resolves to nothing with unresolved_reference naming the parameter', () => {
    const error = given([])
      .when(create(parseAlertDraft(body()), { references: { ...passing, entity: null } }))
      .thenFails(ValidationError, 'unresolved_reference');
    expect(error.errors[0]?.location).toBe('/entities/0/entity_id');
    expect(error.message).toContain('/v1/entities/search');
  });

  it('rejects a second create on the same stream', () => {
    given(created())
      .when(create(parseAlertDraft(body())))
      .thenFails(ValidationError, 'alert_exists');
  });

  it('rejects speaker_roles on an ENTITY_MENTION alert with 422', () => {
    given([])
      .when(create(parseAlertDraft(body({ filters: { speaker_roles: ['GUEST'] } }))))
      .thenFails(ValidationError, 'speaker_roles_not_allowed');
  });

  it('accepts speaker_roles on a PODCAST_SPEAKER alert', () => {
    const [event] = created({ kind: 'PODCAST_SPEAKER', filters: { speaker_roles: ['guest', 'Panelist'] } });
    expect(event?.type === 'AlertCreated' && event.data.filters).toEqual({
      speakerRoles: ['GUEST', 'PANELIST'],
    });
  });

  it('rejects email recipients not verified for the organization, naming each one', () => {
    const draft = parseAlertDraft(
      body({
        notifications: [
          { type: 'EMAIL', email: 'a@example.com' },
          { type: 'EMAIL', email: 'b@example.com' },
        ],
      }),
    );
    const error = given([])
      .when(create(draft, { references: { ...passing, unverifiedEmails: ['b@example.com'] } }))
      .thenFails(ValidationError, 'email_not_verified');
    expect(error.errors).toEqual([
      {
        location: '/notifications/1/email',
        message: 'is not verified for this organization',
        value: 'b@example.com',
      },
    ]);
  });

  it('rejects a webhook or chat connection that is not a live connection of this project', () => {
    const draft = parseAlertDraft(
      body({
        notifications: [
          { type: 'WEBHOOK', webhook_connection_id: 'wh1' },
          { type: 'CHAT', chat_connection_id: 'ch1', chat_channel_id: 'C1' },
        ],
      }),
    );
    const error = given([])
      .when(
        create(draft, {
          references: { ...passing, unusableWebhookConnections: ['wh1'], unusableChatConnections: ['ch1'] },
        }),
      )
      .thenFails(ValidationError, 'connection_unavailable');
    expect(error.errors.map((e) => e.location)).toEqual([
      '/notifications/0/webhook_connection_id',
      '/notifications/1/chat_connection_id',
    ]);
  });

  it.each(['STARTER', 'GROWTH'] as const)(
    'refuses any alert on the %s plan with plan_does_not_support_alerts',
    (plan) => {
      const error = given([])
        .when(
          create(parseAlertDraft(body({ is_active: false })), {
            plan: { plan, alertPacks: 3, activeAlerts: 0 },
          }),
        )
        .thenFails(PlanError, 'plan_does_not_support_alerts');
      expect((error as PlanError).resolve.message).toMatch(/TEAM/);
    },
  );

  it.each([
    ['TEAM', 0, 10],
    ['BUSINESS', 0, 50],
    ['ENTERPRISE', 0, 250],
    ['TEAM', 2, 20],
  ] as const)(
    'on %s with %i packs allows %i active alerts, then add_on_required',
    (plan, alertPacks, allowance) => {
      given([])
        .when(create(parseAlertDraft(body()), { plan: { plan, alertPacks, activeAlerts: allowance - 1 } }))
        .thenEvents(created());
      const error = given([])
        .when(create(parseAlertDraft(body()), { plan: { plan, alertPacks, activeAlerts: allowance } }))
        .thenFails(PlanError, 'add_on_required');
      expect((error as PlanError).resolve.action).toContain(`--quantity ${alertPacks + 1}`);
    },
  );

  it('creates a paused alert even at the allowance, because paused alerts do not count', () => {
    given([])
      .when(create(parseAlertDraft(body({ is_active: false })), { plan: { ...team, activeAlerts: 10 } }))
      .thenEvents(created({ is_active: false }));
  });
});

describe('parsing an alert configuration', () => {
  it('requires exactly one entity with invalid_parameter', () => {
    const two = [
      { entity_type: 'PERSON', entity_id: 'a' },
      { entity_type: 'COMPANY', entity_id: 'b' },
    ];
    expectParseError(() => parseAlertDraft(body({ entities: two })), 'invalid_parameter', '/entities');
    expectParseError(() => parseAlertDraft(body({ entities: [] })), 'invalid_parameter', '/entities');
    expectParseError(() => parseAlertPatch({ entities: two }), 'invalid_parameter', '/entities');
  });

  it('requires title, entities and notifications on create', () => {
    let thrown: ValidationError | undefined;
    try {
      parseAlertDraft({});
    } catch (error) {
      thrown = error as ValidationError;
    }
    expect(thrown?.errors.map((e) => e.location)).toEqual(['/title', '/entities', '/notifications']);
  });

  it('accepts 1 to 20 notifications and rejects 0 or 21', () => {
    const emails = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ type: 'EMAIL', email: `u${i}@example.com` }));
    expect(parseAlertDraft(body({ notifications: emails(20) })).notifications).toHaveLength(20);
    expectParseError(
      () => parseAlertDraft(body({ notifications: [] })),
      'validation_failed',
      '/notifications',
    );
    expectParseError(
      () => parseAlertDraft(body({ notifications: emails(21) })),
      'validation_failed',
      '/notifications',
    );
  });

  it.each([
    [{ type: 'EMAIL' }, '/notifications/0/email'],
    [{ type: 'EMAIL', email: 'not-an-address' }, '/notifications/0/email'],
    [
      { type: 'EMAIL', email: 'a@example.com', webhook_connection_id: 'x' },
      '/notifications/0/webhook_connection_id',
    ],
    [{ type: 'CHAT', chat_connection_id: 'c1' }, '/notifications/0/chat_channel_id'],
    [{ type: 'WEBHOOK' }, '/notifications/0/webhook_connection_id'],
    [{ type: 'SMS', phone: '1' }, '/notifications/0/type'],
    ['EMAIL', '/notifications/0'],
  ])('rejects the malformed channel %j at %s', (channel, location) => {
    expectParseError(
      () => parseAlertDraft(body({ notifications: [channel] })),
      'validation_failed',
      location,
    );
  });

  it('rejects the same channel twice', () => {
    const twice = [
      { type: 'EMAIL', email: 'A@example.com' },
      { type: 'EMAIL', email: 'a@example.com' },
    ];
    expectParseError(
      () => parseAlertDraft(body({ notifications: twice })),
      'validation_failed',
      '/notifications/1',
    );
  });

  it('normalises filters: lower-case languages, upper-case enums, CO_HOST rejected as HOST, duplicates dropped', () => {
    const draft = parseAlertDraft(
      body({
        kind: 'podcast_speaker',
        filters: {
          languages: ['EN', 'de', 'en'],
          relevance: 'relevant',
          source_popularity: ['top_podcast'],
          speaker_roles: ['guest'],
        },
      }),
    );
    expect(draft.kind).toBe('PODCAST_SPEAKER');
    expect(draft.filters).toEqual({
      languages: ['en', 'de'],
      relevance: 'RELEVANT',
      sourcePopularity: ['TOP_PODCAST'],
      speakerRoles: ['GUEST'],
    });
  });

  it.each([
    [{ languages: ['xx'] }, '/filters/languages/0'],
    [{ languages: ['en-US'] }, '/filters/languages/0'],
    [{ languages: 'en' }, '/filters/languages'],
    [{ relevance: 'SOME' }, '/filters/relevance'],
    [{ source_popularity: ['FAMOUS'] }, '/filters/source_popularity/0'],
    [{ speaker_roles: ['HOST'] }, '/filters/speaker_roles/0'],
    [{ speaker_roles: ['co_host'] }, '/filters/speaker_roles/0'],
    [{ speaker_roles: ['DJ'] }, '/filters/speaker_roles/0'],
    [{ topics: ['x'] }, '/filters/topics'],
  ])('rejects the filter %j at %s', (filters, location) => {
    expectParseError(
      () => parseAlertDraft(body({ kind: 'PODCAST_SPEAKER', filters })),
      'validation_failed',
      location,
    );
  });

  it('accepts each of the 13 non-host roles as a filter', () => {
    const roles = [
      'GUEST',
      'PANELIST',
      'CORRESPONDENT',
      'CALLER',
      'LISTENER',
      'REPORTER',
      'INTERVIEWER',
      'NARRATOR',
      'ANNOUNCER',
      'COMMENTATOR',
      'PRODUCER',
      'ADVERTISER',
      'UNKNOWN',
    ];
    expect(
      parseAlertDraft(body({ kind: 'PODCAST_SPEAKER', filters: { speaker_roles: roles } })).filters
        .speakerRoles,
    ).toEqual(roles);
  });

  it('rejects unknown properties, wrong types and an empty title', () => {
    expectParseError(() => parseAlertDraft(body({ colour: 'red' })), 'validation_failed', '/colour');
    expectParseError(() => parseAlertDraft(body({ is_active: 'yes' })), 'validation_failed', '/is_active');
    expectParseError(() => parseAlertDraft(body({ title: '   ' })), 'validation_failed', '/title');
    expectParseError(
      () => parseAlertDraft(body({ delivery_cadence: 'HOURLY' })),
      'validation_failed',
      '/delivery_cadence',
    );
    expectParseError(
      () => parseAlertDraft(body({ entities: [{ entity_type: 'PLACE', entity_id: 'x' }] })),
      'validation_failed',
      '/entities/0/entity_type',
    );
    expectParseError(() => parseAlertDraft(null), 'validation_failed');
  });
});

describe('updating an alert', () => {
  it('records only the fields that changed', () => {
    given(created())
      .when(update({ title: 'New title', delivery_cadence: 'REALTIME' }))
      .thenEvents([
        {
          type: 'AlertUpdated',
          data: {
            alertId: ALERT,
            changes: { title: 'New title' },
            disableTokens: [],
            updatedAt: later.toISOString(),
          },
        },
      ]);
  });

  it('records nothing when nothing changed', () => {
    given(created())
      .when(update({ title: 'Jensen on podcasts', kind: 'ENTITY_MENTION' }))
      .thenEvents([]);
  });

  it('replaces the whole filter set with a supplied filters object', () => {
    const state = foldAlert([...created({ filters: { languages: ['en'], relevance: 'RELEVANT' } })]);
    const after = foldAlert(decide(update({ filters: { source_popularity: ['POPULAR'] } }), state), state);
    expect(after.status !== 'initial' && after.alert.filters).toEqual({ sourcePopularity: ['POPULAR'] });
  });

  it('clears every filter with {}', () => {
    const history = created({ filters: { languages: ['en'] } });
    const events = decide(update({ filters: {} }), foldAlert(history));
    expect(events).toEqual([
      {
        type: 'AlertUpdated',
        data: { alertId: ALERT, changes: { filters: {} }, disableTokens: [], updatedAt: later.toISOString() },
      },
    ]);
  });

  it('keeps filters when the patch does not mention them', () => {
    const history = created({ filters: { languages: ['en'] } });
    const state = foldAlert([...history, ...decide(update({ title: 'x' }), foldAlert(history))]);
    expect(state.status !== 'initial' && state.alert.filters).toEqual({ languages: ['en'] });
  });

  it('refuses to change the kind', () => {
    given(created())
      .when(update({ kind: 'PODCAST_SPEAKER' }))
      .thenFails(ValidationError, 'kind_immutable');
  });

  it('judges speaker_roles against the kind fixed at creation', () => {
    given(created())
      .when(update({ filters: { speaker_roles: ['GUEST'] } }))
      .thenFails(ValidationError, 'speaker_roles_not_allowed');
    given(created({ kind: 'PODCAST_SPEAKER' }))
      .when(update({ filters: { speaker_roles: ['GUEST'] } }))
      .thenEvents([
        {
          type: 'AlertUpdated',
          data: {
            alertId: ALERT,
            changes: { filters: { speakerRoles: ['GUEST'] } },
            disableTokens: [],
            updatedAt: later.toISOString(),
          },
        },
      ]);
  });

  it('issues tokens only to newly added email recipients and drops the removed ones', () => {
    const history = created();
    const events = decide(
      update({
        notifications: [
          { type: 'EMAIL', email: 'ops@example.com' },
          { type: 'EMAIL', email: 'new@example.com' },
        ],
      }),
      foldAlert(history),
    );
    expect(events[0]?.type === 'AlertUpdated' && events[0].data.disableTokens).toEqual([
      token('new@example.com'),
    ]);
    const after = foldAlert([...history, ...events]);
    expect(after.status !== 'initial' && Object.keys(after.alert.disableTokens)).toEqual([
      'ops@example.com',
      'new@example.com',
    ]);

    const removed = decide(update({ notifications: [{ type: 'EMAIL', email: 'new@example.com' }] }), after);
    const final = foldAlert(removed, after);
    expect(final.status !== 'initial' && Object.keys(final.alert.disableTokens)).toEqual(['new@example.com']);
  });

  it('rejects unverified emails, unusable connections and unresolved entities on update too', () => {
    const history = created();
    given(history)
      .when(
        update(
          { notifications: [{ type: 'EMAIL', email: 'x@example.com' }] },
          { references: { unverifiedEmails: ['x@example.com'] } },
        ),
      )
      .thenFails(ValidationError, 'email_not_verified');
    given(history)
      .when(
        update(
          { notifications: [{ type: 'WEBHOOK', webhook_connection_id: 'w' }] },
          { references: { unusableWebhookConnections: ['w'] } },
        ),
      )
      .thenFails(ValidationError, 'connection_unavailable');
    given(history)
      .when(
        update(
          { entities: [{ entity_type: 'COMPANY', entity_id: 'nope' }] },
          { references: { entity: null } },
        ),
      )
      .thenFails(ValidationError, 'unresolved_reference');
  });

  it("answers 404 for another project's alert and for a deleted one", () => {
    given(created())
      .when(update({ title: 'x' }, { projectId: 'projectB' }))
      .thenFails(NotFoundError, 'alert_not_found');
    const deleted: AlertEvent = {
      type: 'AlertDeleted',
      data: { alertId: ALERT, deletedAt: now.toISOString() },
    };
    given([...created(), deleted])
      .when(update({ title: 'x' }))
      .thenFails(NotFoundError, 'alert_not_found');
    given([])
      .when(update({ title: 'x' }))
      .thenFails(NotFoundError, 'alert_not_found');
  });
});

describe('alert activity', () => {
  const paused: AlertEvent = { type: 'AlertPaused', data: { alertId: ALERT, pausedAt: later.toISOString() } };
  const resumed: AlertEvent = {
    type: 'AlertResumed',
    data: { alertId: ALERT, resumedAt: later.toISOString() },
  };

  it('pauses an active alert with is_active false', () => {
    given(created())
      .when(update({ is_active: false }))
      .thenEvents([paused]);
  });

  it('resumes a paused alert with is_active true', () => {
    given([...created(), paused])
      .when(update({ is_active: true }))
      .thenEvents([resumed]);
  });

  it('treats pausing a paused alert and resuming an active one as no-ops', () => {
    given([...created(), paused])
      .when(update({ is_active: false }))
      .thenEvents([]);
    given(created())
      .when(update({ is_active: true }))
      .thenEvents([]);
  });

  it('applies configuration changes before the pause in one decision', () => {
    const events = decide(update({ title: 'Quiet', is_active: false }), foldAlert(created()));
    expect(events.map((e) => e.type)).toEqual(['AlertUpdated', 'AlertPaused']);
  });

  it('refuses to resume past the allowance, and on a plan without alerts', () => {
    given([...created(), paused])
      .when(update({ is_active: true }, { plan: { ...team, activeAlerts: 10 } }))
      .thenFails(PlanError, 'add_on_required');
    given([...created(), paused])
      .when(update({ is_active: true }, { plan: { plan: 'GROWTH', alertPacks: 0, activeAlerts: 0 } }))
      .thenFails(PlanError, 'plan_does_not_support_alerts');
  });

  it('pauses and resumes through the PauseAlert and ResumeAlert commands', () => {
    given(created())
      .when({ type: 'PauseAlert', data: { alertId: ALERT, projectId: PROJECT, now: later } })
      .thenEvents([paused]);
    given([...created(), paused])
      .when({ type: 'ResumeAlert', data: { alertId: ALERT, projectId: PROJECT, plan: team, now: later } })
      .thenEvents([resumed]);
  });

  it('soft-deletes from any state, and a deleted alert cannot be deleted again', () => {
    const deleted: AlertEvent = {
      type: 'AlertDeleted',
      data: { alertId: ALERT, deletedAt: later.toISOString() },
    };
    const command: AlertCommand = {
      type: 'DeleteAlert',
      data: { alertId: ALERT, projectId: PROJECT, now: later },
    };
    given(created()).when(command).thenEvents([deleted]);
    given([...created(), paused])
      .when(command)
      .thenEvents([deleted]);
    expect(foldAlert([...created(), deleted])).toMatchObject({
      status: 'deleted',
      alert: { deletedAt: later.toISOString() },
    });
    given([...created(), deleted])
      .when(command)
      .thenFails(NotFoundError, 'alert_not_found');
  });

  it('disables the alert for a recipient presenting a current token', () => {
    const command: AlertCommand = {
      type: 'DisableAlertByRecipient',
      data: { alertId: ALERT, tokenSha256: 'sha-ops@example.com', now: later },
    };
    const disabled: AlertEvent = {
      type: 'AlertDisabledByRecipient',
      data: { alertId: ALERT, email: 'ops@example.com', disabledAt: later.toISOString() },
    };
    given(created()).when(command).thenEvents([disabled]);
    given([...created(), paused])
      .when(command)
      .thenEvents([disabled]);
    given([...created(), disabled])
      .when(command)
      .thenEvents([]);
    const state = foldAlert([...created(), disabled]);
    expect(state).toMatchObject({ status: 'disabled', alert: { disabledBy: 'ops@example.com' } });
    // The owner may switch it back on.
    given([...created(), disabled])
      .when(update({ is_active: true }))
      .thenEvents([resumed]);
  });

  it('rejects a token that is unknown or belongs to a removed recipient', () => {
    const unknown: AlertCommand = {
      type: 'DisableAlertByRecipient',
      data: { alertId: ALERT, tokenSha256: 'nope', now: later },
    };
    given(created()).when(unknown).thenFails(NotFoundError, 'disable_token_not_found');
    given([]).when(unknown).thenFails(NotFoundError, 'disable_token_not_found');
    const removed: AlertEvent = {
      type: 'AlertUpdated',
      data: {
        alertId: ALERT,
        changes: { notifications: [{ type: 'WEBHOOK', webhookConnectionId: 'w' }] },
        disableTokens: [],
        updatedAt: later.toISOString(),
      },
    };
    given([...created(), removed])
      .when({
        type: 'DisableAlertByRecipient',
        data: { alertId: ALERT, tokenSha256: 'sha-ops@example.com', now: later },
      })
      .thenFails(NotFoundError, 'disable_token_not_found');
  });

  it('accepts a disable click on a deleted alert without recording anything', () => {
    const deleted: AlertEvent = {
      type: 'AlertDeleted',
      data: { alertId: ALERT, deletedAt: later.toISOString() },
    };
    given([...created(), deleted])
      .when({
        type: 'DisableAlertByRecipient',
        data: { alertId: ALERT, tokenSha256: 'sha-ops@example.com', now: later },
      })
      .thenEvents([]);
  });
});
