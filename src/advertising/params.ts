import type { FastifyRequest } from 'fastify';
import { resolvePodcastId } from '../../projections/podcasts/queries.ts';
import { assertRange, instantOf } from '../catalog/params.ts';
import type { Queryable } from '../db/db.ts';
import { PlanError, ValidationError } from '../errors.ts';
import { callerOf } from '../http/auth.ts';
import { getOrganization, type Plan } from '../platform/organizations.ts';
import { resolveCompanyId } from './companies.ts';

/** Plans that include the premium tier (the advertising leaderboard). */
const PREMIUM_PLANS: readonly Plan[] = ['BUSINESS', 'ENTERPRISE'];

/** 402 premium_required, with how to resolve it, for a key whose organization's plan lacks premium. */
export async function assertPremium(db: Queryable, request: FastifyRequest) {
  // A keyless caller paid the leaderboard's own price (docs/payments.md).
  if (request.principal?.kind === 'payer') return;
  const organization = await getOrganization(db, callerOf(request).organizationId);
  if (PREMIUM_PLANS.includes(organization.plan)) return;
  throw new PlanError(
    'premium_required',
    `The advertising leaderboard is a premium endpoint; the ${organization.plan} plan does not include it.`,
    {
      message:
        'Move the organization to the BUSINESS or ENTERPRISE plan (an operator runs `earshot org set-plan --org ID --plan BUSINESS`).',
      action: 'upgrade_plan',
    },
  );
}

export const unresolved = (parameter: string, value: string, resolveWith: string) =>
  new ValidationError('unresolved_reference', `${parameter} ${JSON.stringify(value)} names nothing known.`, [
    { location: `query.${parameter}`, message: `resolves to nothing; find ids with ${resolveWith}`, value },
  ]);

export async function companyIdOf(db: Queryable, value: string, parameter = 'company_id') {
  const id = await resolveCompanyId(db, value);
  if (!id) throw unresolved(parameter, value, 'GET /v1/entities/search?type=company');
  return id;
}

export async function podcastIdOf(db: Queryable, value: string, parameter = 'podcast_id') {
  const id = await resolvePodcastId(db, value);
  if (!id) throw unresolved(parameter, value, 'GET /v1/podcasts/search');
  return id;
}

/** The shows of a publisher, by its id or slug. */
export async function publisherPodcastIds(db: Queryable, value: string, parameter = 'publisher_id') {
  const { rows } = await db.query<{ id: string }>(
    `select id from podcasts where publisher->>'id' = $1::text
     union select id from podcasts where publisher->>'slug' = $1::text`,
    [value],
  );
  if (rows.length === 0) throw unresolved(parameter, value, 'GET /v1/podcasts/search');
  return rows.map((r) => r.id);
}

/** since/until as instants; a bare until date is exclusive (midnight) unless `untilIncludesDay`. */
export function boundsOf(since: string | undefined, until: string | undefined, untilIncludesDay = false) {
  const from = instantOf(since);
  let to = instantOf(until);
  if (to && untilIncludesDay && until && /^\d{4}-\d{2}-\d{2}$/.test(until))
    to = new Date(to.getTime() + 86_400_000);
  assertRange(from, to, 'since', 'until');
  return { since: from, until: to };
}

export const scoreBand = (score: number) => (score >= 0.66 ? 'strong' : score >= 0.33 ? 'moderate' : 'weak');
