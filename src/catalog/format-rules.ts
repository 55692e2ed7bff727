/** The format profile's rules (docs/catalog.md, "Format profile"). Pure: counts in, labels out. */

/** Below this many analyzed episodes guest_frequency and signals are omitted, and has_ads is never false. */
export const MIN_ANALYZED = 5;
/** Trailing window of episodes_per_week and of publishing_status. */
export const ACTIVE_WINDOW_DAYS = 90;
/** A show whose earliest episode is younger than this is briefly tracked. */
export const BRIEFLY_TRACKED_DAYS = 28;

export type GuestFrequency = 'never' | 'rare' | 'occasional' | 'regular' | 'always';
export type FormatSignal = 'interview' | 'panel' | 'call_in' | 'solo_narrated';
export const GUEST_FREQUENCIES: readonly GuestFrequency[] = [
  'never',
  'rare',
  'occasional',
  'regular',
  'always',
];
export const FORMAT_SIGNALS: readonly FormatSignal[] = ['interview', 'panel', 'call_in', 'solo_narrated'];

export interface FormatCounts {
  analyzed: number;
  guest: number;
  panel: number;
  callIn: number;
  ads: number;
  solo: number;
}

export interface FormatLabels {
  rates: { guest: number; panel: number; callIn: number; ads: number; solo: number };
  guestFrequency?: GuestFrequency;
  signals: FormatSignal[];
  hasAds?: boolean;
}

export function guestFrequency(rate: number): GuestFrequency {
  if (rate === 0) return 'never';
  if (rate < 0.2) return 'rare';
  if (rate < 0.5) return 'occasional';
  if (rate < 0.8) return 'regular';
  return 'always';
}

export function formatLabels(c: FormatCounts): FormatLabels {
  const rate = (n: number) => (c.analyzed === 0 ? 0 : n / c.analyzed);
  const rates = {
    guest: rate(c.guest),
    panel: rate(c.panel),
    callIn: rate(c.callIn),
    ads: rate(c.ads),
    solo: rate(c.solo),
  };
  const enough = c.analyzed >= MIN_ANALYZED;
  const signals: FormatSignal[] = [];
  if (enough) {
    if (rates.guest >= 0.5) signals.push('interview');
    if (rates.panel >= 0.5) signals.push('panel');
    if (rates.callIn >= 0.3) signals.push('call_in');
    if (rates.solo >= 0.5) signals.push('solo_narrated');
  }
  return {
    rates,
    ...(enough ? { guestFrequency: guestFrequency(rates.guest) } : {}),
    signals,
    ...(c.ads > 0 ? { hasAds: true } : enough ? { hasAds: false } : {}),
  };
}

/** Episodes published in the trailing window, per week. */
export const episodesPerWeek = (episodesInWindow: number) => episodesInWindow / (ACTIVE_WINDOW_DAYS / 7);

const DAY = 86_400_000;
export const publishingStatus = (latest: Date, now: Date): 'active' | 'dormant' =>
  now.getTime() - latest.getTime() <= ACTIVE_WINDOW_DAYS * DAY ? 'active' : 'dormant';
export const brieflyTracked = (first: Date, now: Date) =>
  now.getTime() - first.getTime() < BRIEFLY_TRACKED_DAYS * DAY;
