import { createHash } from 'node:crypto';
import type { DeliveryCreatedData } from '../delivery/delivery.ts';
import { type MatchedData, readMatches } from '../delivery/matched.ts';
import { fullMatch } from '../delivery/views/match-view.ts';
import type { EventStore } from '../eventstore/port.ts';

/**
 * The webhook body (docs/delivery.md, Webhook body and signature), made only from immutable event data: the DeliveryCreated
 * event and the AlertMatched events it names. Sending and GET …/webhook-payload both call this,
 * so the rebuilt bytes equal the POSTed ones.
 */
export function webhookBody(created: DeliveryCreatedData, matches: ReadonlyMap<string, MatchedData>): string {
  const present = created.matchIds.flatMap((id) => {
    const match = matches.get(id);
    return match ? [fullMatch(match, { summary: created.summaries?.[id] })] : [];
  });
  return JSON.stringify({
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
    matches: present,
  });
}

export async function buildWebhookBody(store: EventStore, created: DeliveryCreatedData): Promise<string> {
  return webhookBody(created, await readMatches(store, created.matchIds));
}

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
