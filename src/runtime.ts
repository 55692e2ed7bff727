import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db } from './db/db.ts';
import type { EventStore } from './eventstore/port.ts';
import type { Projection } from './subscriptions/projection.ts';
import type { Subscriber } from './subscriptions/subscriber.ts';

/** The roles one process can take (`earshot serve --roles`). */
export const ROLES = ['api', 'matcher', 'projector', 'deliverer'] as const;
export type Role = (typeof ROLES)[number];

/** What every capability is built from; made once per process by the composition root. */
export interface Runtime {
  config: Config;
  db: Db;
  store: EventStore;
  secretKey: Buffer;
  /** EARSHOT_PREVIOUS_SECRET_KEYS: still accepted after a rotation, never used for new values. None when absent. */
  previousSecretKeys?: readonly Buffer[];
  log: Logger;
  /** The clock; tests inject one to run a week in a second. */
  now(): Date;
}

export interface Worker {
  name: string;
  role: Role;
  /** Runs until the signal aborts, then finishes in-flight work and resolves. */
  run(signal: AbortSignal): Promise<void>;
  /** The event-store subscriber it follows, if any (`earshot projections status / retry-parked`). */
  subscriber?: Subscriber;
}

/** A capability contributes routes, read models and background workers. */
export interface Capability {
  name: string;
  routes?: FastifyPluginAsync[];
  projections?: Projection[];
  workers?: Worker[];
}
