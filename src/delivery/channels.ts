import type { Notification } from '../alerts/alert.ts';
import type { Channel, DeliveryTarget } from './delivery.ts';

export interface ChannelPlan {
  /** Names the channel inside the alert: part of the delivery id. */
  key: string;
  channel: Channel;
  target: DeliveryTarget;
}

/**
 * Fan-out of one send (docs/delivery.md, Fan-out): one delivery for all EMAIL recipients (each gets their
 * own message), one per CHAT notification, one per WEBHOOK notification. Repeats collapse.
 */
export function channelsOf(notifications: readonly Notification[]): ChannelPlan[] {
  const plans: ChannelPlan[] = [];
  const seen = new Set<string>();
  const emails: string[] = [];
  const emailKeys = new Set<string>();
  for (const notification of notifications) {
    if (notification.type === 'EMAIL') {
      const key = notification.email.trim().toLowerCase();
      if (!emailKeys.has(key)) {
        emailKeys.add(key);
        emails.push(notification.email);
      }
      continue;
    }
    const plan: ChannelPlan =
      notification.type === 'CHAT'
        ? {
            key: `chat:${notification.chatConnectionId}:${notification.chatChannelId}`,
            channel: 'CHAT',
            target: {
              type: 'CHAT',
              chatConnectionId: notification.chatConnectionId,
              chatChannelId: notification.chatChannelId,
            },
          }
        : {
            key: `webhook:${notification.webhookConnectionId}`,
            channel: 'WEBHOOK',
            target: { type: 'WEBHOOK', webhookConnectionId: notification.webhookConnectionId },
          };
    if (seen.has(plan.key)) continue;
    seen.add(plan.key);
    plans.push(plan);
  }
  if (emails.length > 0) plans.unshift({ key: 'email', channel: 'EMAIL', target: { type: 'EMAIL', emails } });
  return plans;
}

/** Whether the alert still notifies this target (the delivery's channel may have been removed since). */
export function stillNotifies(notifications: readonly Notification[], target: DeliveryTarget): boolean {
  switch (target.type) {
    case 'EMAIL':
      return notifications.some((n) => n.type === 'EMAIL');
    case 'CHAT':
      return notifications.some(
        (n) =>
          n.type === 'CHAT' &&
          n.chatConnectionId === target.chatConnectionId &&
          n.chatChannelId === target.chatChannelId,
      );
    case 'WEBHOOK':
      return notifications.some(
        (n) => n.type === 'WEBHOOK' && n.webhookConnectionId === target.webhookConnectionId,
      );
  }
}
