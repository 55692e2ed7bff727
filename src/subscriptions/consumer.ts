import type { Db, Queryable } from '../db/db.ts';
import type { EventStore } from '../eventstore/port.ts';
import { readCheckpoint } from './checkpoints.ts';
import { type RunSubscriptionOptions, runSubscription } from './runner.ts';
import type { EffectsFirstSubscriber } from './subscriber.ts';

/**
 * A consumer of the event store whose effects are appends with deterministic ids: it handles a
 * batch, then saves the batch's end as its checkpoint (an effects-first subscriber). Its
 * checkpoint row and lock are named `consumer:<name>`.
 */
export type Consumer = Omit<EffectsFirstSubscriber, 'mode' | 'lockName'>;

export const checkpointName = (consumer: Pick<Consumer, 'name'>) => `consumer:${consumer.name}`;

export function consumerSubscriber(consumer: Consumer): EffectsFirstSubscriber {
  return {
    mode: 'effects-first',
    name: checkpointName(consumer),
    eventTypes: consumer.eventTypes,
    batchSize: consumer.batchSize ?? 100,
    ...(consumer.start && { start: (checkpoint, signal) => consumer.start!(checkpoint, signal) }),
    handle: (events, signal) => consumer.handle(events, signal),
  };
}

export const readConsumerCheckpoint = (db: Queryable, consumer: Pick<Consumer, 'name'>): Promise<string> =>
  readCheckpoint(db, checkpointName(consumer));

/** Follows the consumer until the signal aborts (see runSubscription). */
export const runConsumer = (db: Db, store: EventStore, consumer: Consumer, options: RunSubscriptionOptions) =>
  runSubscription(db, store, consumerSubscriber(consumer), options);
