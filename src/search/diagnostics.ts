/** One active filter of an empty search: its name, the delta that drops it, and a probe without it. */
export interface ActiveFilter {
  filter: string;
  why: string;
  retryWith: Record<string, string | null>;
  /** Whether anything matches once this filter is relaxed as retryWith says. */
  matchesWithout(): Promise<boolean>;
}

export interface Diagnostics {
  filter: string | null;
  why: string;
  retry_with: Record<string, string | null>;
}

/**
 * Names the filter that excluded everything: the first (in the order given) whose relaxation alone
 * finds something; when none does, the first filter, saying that no single change helps.
 */
export async function diagnose(filters: readonly ActiveFilter[]): Promise<Diagnostics> {
  for (const f of filters)
    if (await f.matchesWithout()) return { filter: f.filter, why: f.why, retry_with: f.retryWith };
  const first = filters[0];
  if (first === undefined)
    return { filter: null, why: 'No transcribed episode is indexed yet.', retry_with: {} };
  return {
    filter: first.filter,
    why: `Nothing matches even with any one filter relaxed; ${first.filter} is the first to widen.`,
    retry_with: first.retryWith,
  };
}

export const diagnosticsSchema = {
  type: 'object',
  required: ['filter', 'why', 'retry_with'],
  properties: {
    filter: { type: ['string', 'null'] },
    why: { type: 'string' },
    retry_with: { type: 'object', additionalProperties: { type: ['string', 'null'] } },
  },
} as const;
