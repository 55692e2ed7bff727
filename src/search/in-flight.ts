import type { FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../errors.ts';
import { workKey } from '../http/auth.ts';
import { WorkSlots } from '../work-slots.ts';

/** EARSHOT_SEARCH_PROJECT_CONCURRENCY's default: search requests of one caller at once per process. */
export const SEARCH_PROJECT_CONCURRENCY = 4;
/** Retry-After of a search refused for lack of a slot: one of the caller's own searches usually ends sooner. */
const BUSY_RETRY_AFTER_S = 1;

/**
 * Search requests in flight per caller (docs/search.md, "Searches in flight"): a handler wrapped
 * by `inSlot` runs in one of its caller's `perCaller` slots, held until its work ends (an answer,
 * an error, or a client gone while its statements still run), and is refused with 429 when all
 * are taken.
 */
export function searchesInFlight(perCaller: number) {
  const slots = new WorkSlots({ perProcess: Number.POSITIVE_INFINITY, perKey: perCaller, queue: 0 });
  return function inSlot<R extends FastifyRequest, T>(handler: (request: R) => Promise<T>) {
    return async (request: R): Promise<T> => {
      const admitted = slots.tryEnter(workKey(request));
      if (!admitted)
        throw new TooManyRequestsError(
          `More than ${perCaller} searches of this caller are running; retry when one has answered.`,
          BUSY_RETRY_AFTER_S,
        );
      const leave = await admitted;
      try {
        return await handler(request);
      } finally {
        leave();
      }
    };
  };
}
