import type { Alert, AlertState } from '../../alerts/alert.ts';
import type { DisableTokens } from '../../alerts/disable-tokens.ts';
import type { ChatClientOptions } from '../../chat/client.ts';
import { chatDestination } from '../../chat/connections.ts';
import { postChatMessage } from '../../chat/send.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { SecretBoxError } from '../../crypto/secret-box.ts';
import type { Queryable } from '../../db/db.ts';
import type { Mailer } from '../../email/mailer.ts';
import { sendAlertEmail } from '../../email/send.ts';
import { webhookDestination } from '../../webhooks/connections.ts';
import { sha256Hex, WebhookBodyTooLargeError, webhookBody } from '../../webhooks/payload.ts';
import { sendWebhook, type WebhookSenderOptions } from '../../webhooks/send.ts';
import { type AttemptOutcome, currentRecipients, type SendFacts } from '../decide.ts';
import type { Delivery, DeliveryCreatedData, RecipientResult } from '../delivery.ts';
import type { MatchedData } from '../matched.ts';
import { noticeOf } from '../notice.ts';

export interface ChannelDeps {
  db: Queryable;
  box: SecretBox;
  tokens: DisableTokens;
  mailer: Mailer;
  publicBaseUrl: string;
  smtpFrom: string;
  webhook: WebhookSenderOptions;
  /** The largest webhook body sent, in UTF-8 bytes; default WEBHOOK_BODY_LIMIT (32 MiB). */
  webhookBodyLimit?: number;
  chat: ChatClientOptions;
}

/**
 * Lookups shared by the deliveries claimed together (one claim is one moment): a burst of
 * deliveries to one connection decrypts its secret once.
 */
export interface Lookups {
  webhook: typeof webhookDestination;
  chat: typeof chatDestination;
}

export const directLookups: Lookups = { webhook: webhookDestination, chat: chatDestination };

export function memoizedLookups(): Lookups {
  const webhooks = new Map<string, ReturnType<typeof webhookDestination>>();
  const chats = new Map<string, ReturnType<typeof chatDestination>>();
  return {
    webhook: (deps, id) => {
      if (!webhooks.has(id)) webhooks.set(id, webhookDestination(deps, id));
      return webhooks.get(id)!;
    },
    chat: (deps, id) => {
      if (!chats.has(id)) chats.set(id, chatDestination(deps, id));
      return chats.get(id)!;
    },
  };
}

const notPrepared = async (): Promise<AttemptOutcome> => {
  throw new Error('a delivery the SKIPPED rules stop has no attempt to make');
};

/** The facts the SKIPPED rules judge (decide.ts), and the one attempt to make if none applies. */
export interface Preparation {
  facts: SendFacts;
  send(): Promise<AttemptOutcome>;
}

/**
 * Reads what the SKIPPED rules need (the connection as it is now) and readies the channel's
 * attempt; `send` may only be called when the decider skipped nothing. `matches` holds the
 * AlertMatched data of the delivery's matches.
 */
export async function prepareAttempt(
  deps: ChannelDeps,
  delivery: Delivery,
  alertState: AlertState,
  matches: ReadonlyMap<string, MatchedData>,
  lookups: Lookups = directLookups,
): Promise<Preparation> {
  const created = delivery.created;
  const present = created.matchIds.flatMap((id) => (matches.has(id) ? [matches.get(id)!] : []));
  const facts: SendFacts = { alert: alertState, matches: present };
  const alert = alertState.status === 'active' ? alertState.alert : undefined;
  if (!alert) return { facts, send: notPrepared };
  switch (created.target.type) {
    case 'WEBHOOK':
      return prepareWebhook(
        deps,
        created,
        alert,
        created.target.webhookConnectionId,
        facts,
        matches,
        lookups,
      );
    case 'CHAT':
      return prepareChat(deps, created, alert, created.target, facts, lookups);
    case 'EMAIL':
      return prepareEmail(deps, created, alert, created.target.emails, facts);
  }
}

/**
 * A secret sealed under a key this process does not have (EARSHOT_SECRET_KEY changed) fails the
 * attempt permanently, with the reason, rather than crashing it again at every retry.
 */
function openOrFail(open: () => string, what: string): string | AttemptOutcome {
  try {
    return open();
  } catch (error) {
    if (!(error instanceof SecretBoxError)) throw error;
    const message = `${what} cannot be opened with the configured EARSHOT_SECRET_KEY: ${error.message}`;
    return { ok: false, retryable: false, durationMs: 0, error: message };
  }
}

async function prepareWebhook(
  deps: ChannelDeps,
  created: DeliveryCreatedData,
  alert: Alert,
  connectionId: string,
  facts: SendFacts,
  matches: ReadonlyMap<string, MatchedData>,
  lookups: Lookups,
): Promise<Preparation> {
  const destination = await lookups.webhook(deps, connectionId);
  if (!destination || destination.projectId !== alert.projectId)
    return { facts: { ...facts, connection: { status: 'missing' } }, send: notPrepared };
  if (destination.revokedAt)
    return { facts: { ...facts, connection: { status: 'revoked' } }, send: notPrepared };
  return {
    facts: { ...facts, connection: { status: 'usable' } },
    async send() {
      const secret = openOrFail(
        () => destination.secret,
        `webhook connection ${connectionId}'s signing secret`,
      );
      if (typeof secret !== 'string') return secret;
      let body: string;
      try {
        body = webhookBody(created, matches, deps.webhookBodyLimit);
      } catch (error) {
        // Permanent: the same matches make the same body.
        if (!(error instanceof WebhookBodyTooLargeError)) throw error;
        return { ok: false, retryable: false, durationMs: 0, error: error.message };
      }
      const payloadSha256 = sha256Hex(body);
      const outcome = await sendWebhook(
        { url: destination.url, deliveryId: created.deliveryId, body, secret },
        deps.webhook,
      );
      return {
        ok: outcome.ok,
        retryable: outcome.retryable,
        durationMs: outcome.durationMs,
        payloadSha256,
        ...(outcome.status !== undefined && { statusCode: outcome.status }),
        ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
        ...(outcome.error !== undefined && { error: outcome.error }),
      };
    },
  };
}

async function prepareChat(
  deps: ChannelDeps,
  created: DeliveryCreatedData,
  alert: Alert,
  target: { chatConnectionId: string; chatChannelId: string },
  facts: SendFacts,
  lookups: Lookups,
): Promise<Preparation> {
  const destination = await lookups.chat(deps, target.chatConnectionId);
  if (!destination || destination.project_id !== alert.projectId)
    return { facts: { ...facts, connection: { status: 'missing' } }, send: notPrepared };
  if (destination.deletedAt)
    return { facts: { ...facts, connection: { status: 'deleted' } }, send: notPrepared };
  return {
    facts: { ...facts, connection: { status: 'usable' } },
    async send() {
      const token = openOrFail(
        () => destination.botToken,
        `chat connection ${target.chatConnectionId}'s bot token`,
      );
      if (typeof token !== 'string') return token;
      const notice = noticeOf(created, facts.matches);
      const outcome = await postChatMessage(
        {
          token,
          channel: target.chatChannelId,
          notice,
          publicBaseUrl: deps.publicBaseUrl,
        },
        deps.chat,
      );
      return {
        ok: outcome.ok,
        retryable: outcome.retryable,
        durationMs: outcome.durationMs,
        ...(outcome.ts !== undefined && { response: `posted as ${outcome.ts}` }),
        ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
        ...(outcome.error !== undefined && { error: outcome.error }),
      };
    },
  };
}

const UNKNOWN_TOKEN_KEY =
  "this recipient's disable link was issued under a key that is neither EARSHOT_SECRET_KEY nor in " +
  'EARSHOT_PREVIOUS_SECRET_KEYS: put that key back among the previous keys, or remove the recipient ' +
  'from the alert and add it again (a new link)';

async function prepareEmail(
  deps: ChannelDeps,
  created: DeliveryCreatedData,
  alert: Alert,
  emails: readonly string[],
  facts: SendFacts,
): Promise<Preparation> {
  const recipients = currentRecipients(alert, emails);
  return {
    facts,
    async send() {
      const notice = noticeOf(created, facts.matches);
      const started = performance.now();
      const results = await Promise.all(
        recipients.map(async (email): Promise<RecipientResult & { retryable: boolean }> => {
          const token = alert.disableTokens[email];
          if (!token)
            return { email, ok: false, retryable: false, error: 'no disable token for this recipient' };
          // The token this recipient was issued, under whichever configured key issued it.
          const disableToken = deps.tokens.linkToken(alert.id, token);
          if (!disableToken) return { email, ok: false, retryable: false, error: UNKNOWN_TOKEN_KEY };
          const outcome = await sendAlertEmail(deps.mailer, {
            notice,
            to: email,
            from: deps.smtpFrom,
            publicBaseUrl: deps.publicBaseUrl,
            disableToken,
          });
          return {
            email,
            ok: outcome.ok,
            retryable: outcome.retryable,
            ...(outcome.response !== undefined && { response: outcome.response }),
            ...(outcome.error !== undefined && { error: outcome.error }),
          };
        }),
      );
      const failed = results.filter((r) => !r.ok);
      const described = failed.map((r) => `${r.email}: ${r.error ?? 'failed'}`).join('; ');
      const sent = results.length - failed.length;
      const durationMs = Math.round(performance.now() - started);
      const audit = results.map(({ retryable: _retryable, ...r }) => r as RecipientResult);
      const firstResponse = results.find((r) => r.ok)?.response;
      if (sent > 0) {
        return {
          ok: true,
          retryable: false,
          durationMs,
          recipients: audit,
          ...(firstResponse !== undefined && { response: firstResponse }),
          ...(failed.length > 0 && {
            error: `${failed.length} of ${results.length} recipients failed: ${described}`,
          }),
        };
      }
      return {
        ok: false,
        retryable: results.some((r) => r.retryable),
        durationMs,
        recipients: audit,
        error: `every recipient failed: ${described}`,
        ...(failed[0]?.response !== undefined && { response: failed[0].response }),
      };
    },
  };
}
