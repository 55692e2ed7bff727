import pRetry, { type Options } from 'p-retry';

/** Delays between attempts: doubling from `initialMs` up to `maxMs`, each randomized by 1–2×. */
export interface BackoffOptions {
  /** First delay, in ms. Default 500. */
  initialMs?: number;
  /** Longest delay, in ms. Default 30 000. */
  maxMs?: number;
}

export interface RetryOptions {
  backoff?: BackoffOptions;
  /** Retries after the first attempt. Default: until it succeeds or the signal aborts. */
  retries?: number;
  signal?: AbortSignal;
  /** Told of each failed attempt (1-based), before the wait. */
  onFailedAttempt?(error: Error, attempt: number): void;
  /** False stops retrying at once: the attempt's error is thrown. */
  shouldRetry?(error: Error): boolean;
}

/**
 * Every in-process retry with backoff goes through here (p-retry). Rejects with the last error
 * when the retries are spent or `shouldRetry` refuses, with the signal's reason on abort.
 */
export function retry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const pOptions: Options = {
    retries: options.retries ?? Number.POSITIVE_INFINITY,
    factor: 2,
    minTimeout: options.backoff?.initialMs ?? 500,
    maxTimeout: options.backoff?.maxMs ?? 30_000,
    randomize: true,
    ...(options.signal && { signal: options.signal }),
    onFailedAttempt: ({ error, attemptNumber }) => options.onFailedAttempt?.(error, attemptNumber),
    ...(options.shouldRetry && { shouldRetry: ({ error }) => options.shouldRetry!(error) }),
  };
  // p-retry gives up on a TypeError at once (it takes one for a programming error); here every
  // failure gets the same retries, so a TypeError travels wrapped, its message kept.
  const wrapped = async (attemptNumber: number) => {
    try {
      return await attempt(attemptNumber);
    } catch (error) {
      if (error instanceof TypeError) throw new Error(error.message, { cause: error });
      throw error;
    }
  };
  return pRetry(wrapped, pOptions);
}
