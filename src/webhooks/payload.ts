import { createHash } from 'node:crypto';
import type { DeliveryCreatedData } from '../delivery/delivery.ts';
import { type MatchedData, readMatches } from '../delivery/matched.ts';
import { fullMatch } from '../delivery/views/match-view.ts';
import type { EventStore } from '../eventstore/port.ts';

/**
 * The most UTF-8 bytes a webhook body may take (docs/delivery.md, Webhook body and signature). A
 * digest carries every match of its window in full, and a match may hold 500,000 characters of
 * lines: 100 such matches made a 75 MB body, and past about 720 the body no longer fits in a
 * JavaScript string, so building it threw after 12 s of blocked event loop, at every retry.
 */
export const WEBHOOK_BODY_LIMIT = 32 * 1024 * 1024;

/** A webhook body that would pass WEBHOOK_BODY_LIMIT: nothing is sent. */
export class WebhookBodyTooLargeError extends Error {
  constructor(deliveryId: string, limit: number, matchCount: number, serialized: number) {
    super(
      `the webhook body would be over ${limit} bytes (passed at match ${serialized} of ${matchCount}), ` +
        `so nothing was sent; the matches are served by GET /v1/alerts/deliveries/${deliveryId}?view=detailed`,
    );
  }
}

/**
 * The webhook body (docs/delivery.md, Webhook body and signature), made only from immutable event data: the DeliveryCreated
 * event and the AlertMatched events it names. Sending and GET …/webhook-payload both call this,
 * so the rebuilt bytes equal the POSTed ones. It is the JSON of one object whose last key is
 * `matches`, written a match at a time so that a body past `limit` stops there
 * (WebhookBodyTooLargeError) instead of being built whole.
 */
export function webhookBody(
  created: DeliveryCreatedData,
  matches: ReadonlyMap<string, MatchedData>,
  limit: number = WEBHOOK_BODY_LIMIT,
): string {
  const present = created.matchIds.filter((id) => matches.has(id));
  const head = JSON.stringify({
    type: created.type,
    delivery_id: created.deliveryId,
    created_at: created.createdAt,
    alert: {
      id: created.alert.id,
      kind: created.alert.kind,
      title: created.alert.title,
      project_id: created.alert.project_id,
      organization_id: created.alert.organization_id,
    },
    match_count: present.length,
  });
  const parts: string[] = [`${head.slice(0, -1)},"matches":[`];
  let bytes = Buffer.byteLength(parts[0]!) + 2;
  for (const [i, id] of present.entries()) {
    const part = JSON.stringify(fullMatch(matches.get(id)!, { summary: created.summaries?.[id] }));
    bytes += Buffer.byteLength(part) + (i > 0 ? 1 : 0);
    if (bytes > limit) throw new WebhookBodyTooLargeError(created.deliveryId, limit, present.length, i + 1);
    parts.push(i > 0 ? `,${part}` : part);
  }
  parts.push(']}');
  return parts.join('');
}

export async function buildWebhookBody(store: EventStore, created: DeliveryCreatedData): Promise<string> {
  return webhookBody(created, await readMatches(store, created.matchIds));
}

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
