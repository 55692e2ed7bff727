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
 * are taken. One `inSlot` serves every search route of the process (src/composition.ts), so a
 * caller's podcast, entity and transcript searches share its slots. `isSearch` tells a route's
 * searches from its plain lists (a list without `q` takes no slot).
 */
export function searchesInFlight(perCaller = SEARCH_PROJECT_CONCURRENCY) {
  const slots = new WorkSlots({ perProcess: Number.POSITIVE_INFINITY, perKey: perCaller, queue: 0 });
  return function inSlot<R extends FastifyRequest, A extends unknown[], T>(
    handler: (request: R, ...rest: A) => Promise<T>,
    isSearch: (request: R) => boolean = () => true,
  ) {
    return async (request: R, ...rest: A): Promise<T> => {
      if (!isSearch(request)) return handler(request, ...rest);
      const admitted = slots.tryEnter(workKey(request));
      if (!admitted)
        throw new TooManyRequestsError(
          `More than ${perCaller} searches of this caller are running; retry when one has answered.`,
          BUSY_RETRY_AFTER_S,
        );
      const leave = await admitted;
      try {
        return await handler(request, ...rest);
      } finally {
        leave();
      }
    };
  };
}

/** The slots every search route of a process shares. */
export type SearchSlots = ReturnType<typeof searchesInFlight>;

/** The OpenAPI description's note on a search route's 429. */
export const BUSY_NOTE =
  '429 rate_limit_exceeded (with Retry-After) while the caller has too many searches running.';
