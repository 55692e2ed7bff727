import { type DisableTokens, hashDisableToken } from '../alerts/disable-tokens.ts';
import { TOKEN_PURPOSE } from '../chat/connections.ts';
import { type SecretBox, SecretBoxError } from '../crypto/secret-box.ts';
import type { Queryable } from '../db/db.ts';
import { SECRET_PURPOSE } from '../webhooks/connections.ts';

/**
 * Every column holding values sealed by the secret box, with the purpose they are sealed for
 * (src/webhooks/connections.ts and chat.ts).
 */
const SEALED = [
  { table: 'webhook_connections', column: 'secret_sealed', purpose: SECRET_PURPOSE },
  { table: 'chat_connections', column: 'bot_token_sealed', purpose: TOKEN_PURPOSE },
] as const;

type Sealed = (typeof SEALED)[number];

const PAGE = 500;

export interface ResealResult {
  /** Values moved from a previous key to the current one by this run. */
  resealed: number;
  /** Values still sealed under another key after the run: 0 unless some could not be opened. */
  remaining: number;
  /** The values that could not be opened (their key is configured neither as current nor previous). */
  unopenable?: Array<{ table: string; id: string; error: string }>;
}

/**
 * `earshot secrets reseal`: seals under the current key every value still sealed under a previous
 * one. Idempotent, and safe beside running services: each row is replaced only if it still holds
 * the value read (compare-and-set), so a secret rotated or a chat token replaced meanwhile is
 * never overwritten with the old one; such a row is read again and resealed if it still needs it.
 */
export async function resealSecrets(deps: { db: Queryable; box: SecretBox }): Promise<ResealResult> {
  let resealed = 0;
  const unopenable: NonNullable<ResealResult['unopenable']> = [];
  for (const sealed of SEALED) {
    for await (const row of rowsOf(deps.db, sealed)) {
      try {
        if (await resealRow(deps, sealed, row.id, row.value)) resealed++;
      } catch (error) {
        if (!(error instanceof SecretBoxError)) throw error;
        unopenable.push({ table: sealed.table, id: row.id, error: error.message });
      }
    }
  }
  let remaining = 0;
  for (const sealed of SEALED) {
    for await (const row of rowsOf(deps.db, sealed)) if (deps.box.needsReseal(row.value)) remaining++;
  }
  return { resealed, remaining, ...(unopenable.length > 0 && { unopenable }) };
}

/** Every row of the table in id order, a page at a time. */
async function* rowsOf(db: Queryable, { table, column }: Sealed) {
  let after = '';
  for (;;) {
    const { rows } = await db.query<{ id: string; value: string }>(
      `select id, ${column} as value from ${table} where id > $1::text order by id limit $2::int`,
      [after, PAGE],
    );
    yield* rows;
    if (rows.length < PAGE) return;
    after = rows.at(-1)!.id;
  }
}

async function resealRow(
  deps: { db: Queryable; box: SecretBox },
  { table, column, purpose }: Sealed,
  id: string,
  value: string,
): Promise<boolean> {
  for (let current: string | undefined = value; current !== undefined; ) {
    if (!deps.box.needsReseal(current)) return false;
    const next = deps.box.seal(deps.box.open(current, purpose), purpose);
    const swapped = await deps.db.query(
      `update ${table} set ${column} = $3::text where id = $1::text and ${column} = $2::text`,
      [id, current, next],
    );
    if (swapped.rowCount === 1) return true;
    // Changed meanwhile (a secret rotation, a chat token replaced): look at what is there now.
    const { rows } = await deps.db.query<{ value: string }>(
      `select ${column} as value from ${table} where id = $1::text`,
      [id],
    );
    current = rows[0]?.value;
  }
  return false;
}

/**
 * Email recipients (of alerts not deleted) whose disable link is derived from a previous key, not
 * the current one: while any remain, removing the previous keys breaks their links (the email
 * sender then fails those recipients). A token is never re-issued, so this shrinks only as
 * recipients are removed or alerts deleted.
 */
export async function disableLinksNeedingPreviousKeys(db: Queryable, tokens: DisableTokens): Promise<number> {
  let count = 0;
  let after = '';
  for (;;) {
    const { rows } = await db.query<{
      token_sha256: string;
      alert_id: string;
      email: string;
      token_id: string;
    }>(
      `select t.token_sha256, t.alert_id, t.email, t.token_id
         from alert_disable_tokens t join alerts a on a.id = t.alert_id
        where a.status <> 'deleted' and t.token_sha256 > $1::text
        order by t.token_sha256 limit $2::int`,
      [after, PAGE],
    );
    for (const row of rows)
      if (hashDisableToken(tokens.tokenFor(row.alert_id, row.email, row.token_id)) !== row.token_sha256)
        count++;
    if (rows.length < PAGE) return count;
    after = rows.at(-1)!.token_sha256;
  }
}
