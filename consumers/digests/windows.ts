import type { DigestCadence } from '../../src/delivery/delivery.ts';

const DAY = 86_400_000;

export interface DigestWindow {
  cadence: DigestCadence;
  /** Inclusive, 00:00 UTC (a Monday for WEEKLY). */
  start: Date;
  /** Exclusive: when the digest is due. */
  end: Date;
}

export const periodMs = (cadence: DigestCadence) => (cadence === 'DAILY' ? DAY : 7 * DAY);

/** The window that contains `at`: its UTC day, or its Monday–Sunday week. */
export function windowContaining(cadence: DigestCadence, at: Date): DigestWindow {
  const day = Math.floor(at.getTime() / DAY) * DAY;
  // 1970-01-01 was a Thursday: days since the last Monday = (weekday + 6) % 7.
  const start = cadence === 'DAILY' ? day : day - ((new Date(day).getUTCDay() + 6) % 7) * DAY;
  return windowStarting(cadence, new Date(start));
}

export const windowStarting = (cadence: DigestCadence, start: Date): DigestWindow => ({
  cadence,
  start,
  end: new Date(start.getTime() + periodMs(cadence)),
});

export const previousWindow = (window: DigestWindow): DigestWindow =>
  windowStarting(window.cadence, new Date(window.start.getTime() - periodMs(window.cadence)));
