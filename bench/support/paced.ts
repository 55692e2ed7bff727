import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';

/** One kind of request of a paced load. */
export interface PacedRequest {
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/**
 * An open-loop load at an even rate over the connections of `pool`: request i is due at
 * start + i / rate whatever the earlier ones are doing, and its latency counts from that moment, so
 * a request that waits for a free connection or for a late client counts its wait (no coordinated
 * omission). autocannon's `overallRate` is not this: each connection sends at full speed until the
 * second's quota is spent, then waits for the next second, so its "paced" run is a saturated burst
 * at the start of every second. Resolves with the latencies (ms) and the number of answers that
 * were not 2xx or failed.
 */
export async function paced(
  pool: Pool,
  request: PacedRequest,
  options: { rate: number; seconds: number },
): Promise<{ times: number[]; failures: number }> {
  const total = Math.round(options.rate * options.seconds);
  const interval = 1000 / options.rate;
  const times: number[] = [];
  let failures = 0;
  const sent: Promise<void>[] = [];
  const send = async (due: number) => {
    try {
      const answer = await pool.request({ method: 'GET', ...request });
      await answer.body.dump();
      if (answer.statusCode >= 300) failures++;
    } catch {
      failures++;
    }
    times.push(performance.now() - due);
  };
  const start = performance.now();
  let next = 0;
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      for (; next < total && start + next * interval <= now; next++) sent.push(send(start + next * interval));
      if (next >= total) return done();
      setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    tick();
  });
  await Promise.all(sent);
  return { times, failures };
}
