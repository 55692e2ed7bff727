import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/db.ts';
import { NotFoundError } from '../errors.ts';
import { base62 } from '../ids.ts';

export const KEY_PREFIX = 'ek_';
const KEY_PATTERN = /^ek_([0-9A-Za-z]{16})_([0-9A-Za-z]{40})$/;

export type KeyKind = 'project' | 'ingest';

/** Who is calling: resolved from a presented API key. */
export interface Principal {
  keyId: string;
  /** payer: no key, a keyless call paid with x402 (docs/payments.md); reaches billable routes only. */
  kind: KeyKind | 'payer';
  projectId: string | null;
  organizationId: string | null;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

export async function createKey(db: Queryable, input: { kind: KeyKind; projectId?: string }) {
  if (input.kind === 'project') {
    const { rowCount } = await db.query('select 1 from projects where id = $1', [input.projectId]);
    if (rowCount === 0) throw new NotFoundError('project_not_found', `No project ${input.projectId}.`);
  }
  const id = base62(16);
  const secret = base62(40);
  await db.query(
    'insert into api_keys (id, kind, project_id, secret_sha256) values ($1::text, $2::text, $3::text, $4::bytea)',
    [id, input.kind, input.kind === 'project' ? input.projectId : null, sha256(secret)],
  );
  return { id, key: `${KEY_PREFIX}${id}_${secret}`, kind: input.kind, project_id: input.projectId ?? null };
}

export async function revokeKey(db: Queryable, id: string) {
  const { rows } = await db.query<{ id: string; revoked_at: Date }>(
    'update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1::text returning id, revoked_at',
    [id],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError('key_not_found', `No API key ${id}.`);
  return { id: row.id, revoked_at: row.revoked_at.toISOString() };
}

interface KeyRow {
  id: string;
  kind: KeyKind;
  project_id: string | null;
  organization_id: string | null;
  secret_sha256: Buffer;
  revoked_at: Date | null;
}

/**
 * Verifies presented keys: looks the key up by its public id, then compares the secret's hash
 * in constant time. Verified keys are cached for `cacheMs`, so a revocation takes effect within
 * that time on every process.
 */
export class KeyVerifier {
  readonly #cache = new Map<string, { principal: Principal | null; until: number }>();

  constructor(
    private readonly db: Queryable,
    private readonly cacheMs = 5_000,
    private readonly maxEntries = 10_000,
  ) {}

  async verify(presented: string): Promise<Principal | null> {
    // Only keys of the right shape are cached: a hit needs no pattern match.
    const now = Date.now();
    const cached = this.#cache.get(presented);
    if (cached && cached.until > now) return cached.principal;
    const match = KEY_PATTERN.exec(presented);
    if (!match) return null;
    const principal = await this.#lookup(match[1]!, match[2]!);
    if (this.#cache.size >= this.maxEntries) this.#cache.clear();
    this.#cache.set(presented, { principal, until: now + this.cacheMs });
    return principal;
  }

  async #lookup(id: string, secret: string): Promise<Principal | null> {
    const { rows } = await this.db.query<KeyRow>(
      `select k.id, k.kind, k.project_id, p.organization_id, k.secret_sha256, k.revoked_at
         from api_keys k left join projects p on p.id = k.project_id
        where k.id = $1::text`,
      [id],
    );
    const row = rows[0];
    // Hash even when the id is unknown, so timing does not tell ids apart.
    const expected = row?.secret_sha256 ?? randomBytes(32);
    const matches = timingSafeEqual(sha256(secret), Buffer.from(expected));
    if (!row || !matches || row.revoked_at) return null;
    return { keyId: row.id, kind: row.kind, projectId: row.project_id, organizationId: row.organization_id };
  }
}
