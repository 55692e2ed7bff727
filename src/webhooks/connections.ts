import type { SecretBox } from '../crypto/secret-box.ts';
import type { Queryable } from '../db/db.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { base62 } from '../ids.ts';
import type { UrlCheck } from './address-rule.ts';
import { generateWebhookSecret, webhookSecretPrefix } from './signature.ts';

/** Webhook connections (docs/alerts.md, Webhook connections): a project's destination URL and its signing secret. */
export interface WebhookConnectionDeps {
  db: Queryable;
  box: SecretBox;
  /** The URL rule of src/webhooks/address-rule.ts, bound to EARSHOT_WEBHOOK_ALLOW_CIDRS. */
  checkUrl(url: string): Promise<UrlCheck>;
  now(): Date;
}

export type Surface = 'PLATFORM' | 'SECOND_SURFACE';

export interface WebhookConnection {
  id: string;
  project_id: string;
  url: string;
  secret_prefix: string;
  surface: Surface;
  name?: string;
  created_by: { id: string; name: string } | null;
  created_at: string;
  revoked_at?: string;
}

/** Only in the create and rotate responses. */
export type WebhookConnectionWithSecret = WebhookConnection & { secret: string };

interface Row {
  id: string;
  project_id: string;
  url: string;
  secret_sealed: string;
  secret_prefix: string;
  surface: Surface;
  name: string | null;
  created_by_id: string | null;
  created_by_name: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

export const SECRET_PURPOSE = 'webhook-secret';
const MAX_URL_LENGTH = 2048;
const MAX_NAME_LENGTH = 200;

function toConnection(row: Row): WebhookConnection {
  const connection: WebhookConnection = {
    id: row.id,
    project_id: row.project_id,
    url: row.url,
    secret_prefix: row.secret_prefix,
    surface: row.surface,
    created_by: row.created_by_id ? { id: row.created_by_id, name: row.created_by_name ?? '' } : null,
    created_at: row.created_at.toISOString(),
  };
  if (row.name !== null) connection.name = row.name;
  if (row.revoked_at) connection.revoked_at = row.revoked_at.toISOString();
  return connection;
}

async function assertAllowedUrl(deps: WebhookConnectionDeps, url: string) {
  if (url.length > MAX_URL_LENGTH) {
    throw new ValidationError(
      'invalid_webhook_url',
      `The webhook URL is longer than ${MAX_URL_LENGTH} characters.`,
      [{ location: '/url', message: `must be at most ${MAX_URL_LENGTH} characters` }],
    );
  }
  const check = await deps.checkUrl(url);
  if (!check.ok) {
    throw new ValidationError('invalid_webhook_url', check.message, [
      { location: '/url', message: `${check.reason}: ${check.message}`, value: url },
    ]);
  }
  return check.url.toString();
}

export async function createWebhookConnection(
  deps: WebhookConnectionDeps,
  input: {
    projectId: string;
    url: string;
    name?: string | null;
    surface?: Surface;
    createdBy?: { id: string; name: string };
  },
): Promise<WebhookConnectionWithSecret> {
  const url = await assertAllowedUrl(deps, input.url);
  const name = input.name?.trim() || null;
  if (name && name.length > MAX_NAME_LENGTH) {
    throw new ValidationError('validation_failed', `name must be at most ${MAX_NAME_LENGTH} characters.`, [
      { location: '/name', message: `must be at most ${MAX_NAME_LENGTH} characters` },
    ]);
  }
  const secret = generateWebhookSecret();
  const { rows } = await deps.db.query<Row>(
    `insert into webhook_connections (id, project_id, url, secret_sealed, secret_prefix, surface, name,
                                      created_by_id, created_by_name, created_at)
     values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::timestamptz)
     returning *`,
    [
      base62(22),
      input.projectId,
      url,
      deps.box.seal(secret, SECRET_PURPOSE),
      webhookSecretPrefix(secret),
      input.surface ?? 'PLATFORM',
      name,
      input.createdBy?.id ?? null,
      input.createdBy?.name ?? null,
      deps.now(),
    ],
  );
  return { ...toConnection(rows[0]!), secret };
}

export async function findWebhookConnection(db: Queryable, id: string): Promise<WebhookConnection | null> {
  const { rows } = await db.query<Row>('select * from webhook_connections where id = $1::text', [id]);
  return rows[0] ? toConnection(rows[0]) : null;
}

export interface ConnectionPosition {
  createdAt: string;
  id: string;
}

/** A project's connections, revoked ones included (they stay readable), newest first. */
export async function listWebhookConnections(
  db: Queryable,
  projectId: string,
  options: { limit: number; after?: ConnectionPosition },
): Promise<WebhookConnection[]> {
  const { rows } = await db.query<Row>(
    `select * from webhook_connections
      where project_id = $1::text
        and ($2::timestamptz is null or (created_at, id) < ($2::timestamptz, $3::text))
      order by created_at desc, id desc
      limit $4::int`,
    [projectId, options.after?.createdAt ?? null, options.after?.id ?? null, options.limit],
  );
  return rows.map(toConnection);
}

const notFound = (id: string) =>
  new NotFoundError('webhook_connection_not_found', `No webhook connection ${id}.`);

/** Revokes (the DELETE): it stops delivering at once and stays readable with revoked_at. Idempotent. */
export async function revokeWebhookConnection(
  deps: Pick<WebhookConnectionDeps, 'db' | 'now'>,
  projectId: string,
  id: string,
) {
  const { rows } = await deps.db.query<Row>(
    `update webhook_connections set revoked_at = coalesce(revoked_at, $3::timestamptz)
      where id = $1::text and project_id = $2::text returning *`,
    [id, projectId, deps.now()],
  );
  if (!rows[0]) throw notFound(id);
  return toConnection(rows[0]);
}

/** A new secret, returned once; the old one stops signing immediately. */
export async function rotateWebhookSecret(
  deps: WebhookConnectionDeps,
  projectId: string,
  id: string,
): Promise<WebhookConnectionWithSecret> {
  const secret = generateWebhookSecret();
  const { rows } = await deps.db.query<Row>(
    `update webhook_connections
        set secret_sealed = $3::text, secret_prefix = $4::text, secret_rotated_at = $5::timestamptz
      where id = $1::text and project_id = $2::text and revoked_at is null
      returning *`,
    [id, projectId, deps.box.seal(secret, SECRET_PURPOSE), webhookSecretPrefix(secret), deps.now()],
  );
  if (rows[0]) return { ...toConnection(rows[0]), secret };
  const existing = await findWebhookConnection(deps.db, id);
  if (existing?.project_id === projectId) {
    throw new ConflictError(
      'webhook_connection_revoked',
      `Webhook connection ${id} is revoked; create a new one.`,
    );
  }
  throw notFound(id);
}

/** For the webhook sender: where to post and the current secret. Null when unknown. */
export async function webhookDestination(
  deps: Pick<WebhookConnectionDeps, 'db' | 'box'>,
  id: string,
): Promise<{ id: string; projectId: string; url: string; secret: string; revokedAt: Date | null } | null> {
  const { rows } = await deps.db.query<Row>('select * from webhook_connections where id = $1::text', [id]);
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    projectId: row.project_id,
    url: row.url,
    // Opened on use, so a revoked connection is recognised without its secret.
    get secret() {
      return deps.box.open(row.secret_sealed, SECRET_PURPOSE);
    },
    revokedAt: row.revoked_at,
  };
}

/** The ids among `ids` that are live (not revoked) connections of the project. */
export async function liveWebhookConnections(db: Queryable, projectId: string, ids: readonly string[]) {
  if (ids.length === 0) return new Set<string>();
  const { rows } = await db.query<{ id: string }>(
    `select id from webhook_connections
      where project_id = $1::text and id = any($2::text[]) and revoked_at is null`,
    [projectId, ids],
  );
  return new Set(rows.map((row) => row.id));
}
