import type { Queryable } from '../db/db.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { base62 } from '../ids.ts';

export const PLANS = ['STARTER', 'GROWTH', 'TEAM', 'BUSINESS', 'ENTERPRISE'] as const;
export type Plan = (typeof PLANS)[number];

export interface Organization {
  id: string;
  name: string;
  plan: Plan;
  alert_packs: number;
  created_at: string;
  updated_at: string;
}

interface OrganizationRow {
  id: string;
  name: string;
  plan: Plan;
  alert_packs: number;
  created_at: Date;
  updated_at: Date;
}

const toOrganization = (row: OrganizationRow): Organization => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  alert_packs: row.alert_packs,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

export function parsePlan(value: string): Plan {
  const plan = value.toUpperCase();
  if (!(PLANS as readonly string[]).includes(plan))
    throw new ValidationError('invalid_parameter', `plan must be one of ${PLANS.join(', ')}`, [
      { location: 'plan', message: 'unknown plan', value },
    ]);
  return plan as Plan;
}

export async function createOrganization(db: Queryable, input: { name: string; plan: Plan }) {
  const id = base62(16);
  const { rows } = await db.query<OrganizationRow>(
    'insert into organizations (id, name, plan) values ($1::text, $2::text, $3::text) returning *',
    [id, input.name, input.plan],
  );
  return toOrganization(rows[0]!);
}

export async function getOrganization(db: Queryable, id: string) {
  const { rows } = await db.query<OrganizationRow>('select * from organizations where id = $1::text', [id]);
  if (!rows[0]) throw new NotFoundError('organization_not_found', `No organization ${id}.`);
  return toOrganization(rows[0]);
}

export async function setPlan(db: Queryable, id: string, plan: Plan) {
  const { rows } = await db.query<OrganizationRow>(
    'update organizations set plan = $2::text, updated_at = now() where id = $1::text returning *',
    [id, plan],
  );
  if (!rows[0]) throw new NotFoundError('organization_not_found', `No organization ${id}.`);
  return toOrganization(rows[0]);
}

/** Sets the number of Alerts Pack add-ons (each adds 5 active alerts). */
export async function setAlertPacks(db: Queryable, id: string, quantity: number) {
  if (!Number.isInteger(quantity) || quantity < 0)
    throw new ValidationError('invalid_parameter', 'quantity must be a whole number ≥ 0', [
      { location: 'quantity', message: 'must be a whole number ≥ 0', value: quantity },
    ]);
  const { rows } = await db.query<OrganizationRow>(
    'update organizations set alert_packs = $2::int, updated_at = now() where id = $1::text returning *',
    [id, quantity],
  );
  if (!rows[0]) throw new NotFoundError('organization_not_found', `No organization ${id}.`);
  return toOrganization(rows[0]);
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export async function verifyEmail(db: Queryable, organizationId: string, email: string) {
  if (!EMAIL.test(email.trim()))
    throw new ValidationError('invalid_parameter', `${email} is not an email address`, [
      { location: 'email', message: 'not an email address', value: email },
    ]);
  await getOrganization(db, organizationId);
  const { rows } = await db.query<{ email: string; verified_at: Date }>(
    `insert into organization_emails (organization_id, email) values ($1::text, $2::text)
     on conflict (organization_id, email) do update set email = excluded.email
     returning email, verified_at`,
    [organizationId, normalizeEmail(email)],
  );
  return { email: rows[0]!.email, verified_at: rows[0]!.verified_at.toISOString() };
}

/** The subset of emails verified for the organization. */
export async function verifiedEmails(db: Queryable, organizationId: string, emails: readonly string[]) {
  const { rows } = await db.query<{ email: string }>(
    'select email from organization_emails where organization_id = $1::text and email = any($2::text[])',
    [organizationId, emails.map(normalizeEmail)],
  );
  return new Set(rows.map((row) => row.email));
}

export async function createProject(db: Queryable, input: { organizationId: string; name: string }) {
  await getOrganization(db, input.organizationId);
  const id = base62(22);
  const { rows } = await db.query<{ id: string; organization_id: string; name: string; created_at: Date }>(
    'insert into projects (id, organization_id, name) values ($1::text, $2::text, $3::text) returning *',
    [id, input.organizationId, input.name],
  );
  const row = rows[0]!;
  return {
    id: row.id,
    organization_id: row.organization_id,
    name: row.name,
    created_at: row.created_at.toISOString(),
  };
}
