import type { SecretBox } from '../crypto/secret-box.ts';
import { openForRoute } from '../crypto/unreadable-secret.ts';
import type { Queryable } from '../db/db.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { base62 } from '../ids.ts';

/**
 * Connected chat workspaces (Slack). Installing is an operator step (`earshot chat add`), the
 * stand-in for the dashboard's one-time install; the API lists, lists channels and deletes.
 */
export interface ChatConnection {
  id: string;
  project_id: string;
  team_id: string;
  team_name: string;
  created_at: string;
  updated_at: string;
  deleted_at?: string;
}

export interface ChatChannel {
  id: string;
  name: string;
  is_private?: boolean;
}

/** The chat sender's channel listing (consumers/chat), bound to SLACK_API_URL. */
export type ChannelLister = (input: { botToken: string }) => Promise<ChatChannel[]>;

interface Row {
  id: string;
  project_id: string;
  team_id: string;
  team_name: string;
  bot_token_sealed: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export const TOKEN_PURPOSE = 'chat-bot-token';

function toConnection(row: Row): ChatConnection {
  const connection: ChatConnection = {
    id: row.id,
    project_id: row.project_id,
    team_id: row.team_id,
    team_name: row.team_name,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
  if (row.deleted_at) connection.deleted_at = row.deleted_at.toISOString();
  return connection;
}

function required(value: string, name: string, pattern?: RegExp) {
  const trimmed = value.trim();
  if (!trimmed || trimmed.length > 500 || (pattern && !pattern.test(trimmed))) {
    throw new ValidationError('invalid_parameter', `--${name} is missing or malformed.`, [
      { location: name, message: pattern ? `must match ${pattern}` : 'must be a non-empty string', value },
    ]);
  }
  return trimmed;
}

/**
 * Connects a workspace to a project (the CLI's `earshot chat add`). Installing the same
 * workspace again replaces its bot token and keeps the connection id, so alerts keep working.
 */
export async function addChatConnection(
  deps: { db: Queryable; box: SecretBox; now(): Date },
  input: { projectId: string; teamId: string; teamName: string; botToken: string },
): Promise<ChatConnection> {
  const teamId = required(input.teamId, 'team-id');
  const teamName = required(input.teamName, 'team-name');
  const botToken = required(input.botToken, 'bot-token', /^\S+$/);
  const project = await deps.db.query('select 1 from projects where id = $1::text', [input.projectId]);
  if (project.rowCount === 0) throw new NotFoundError('project_not_found', `No project ${input.projectId}.`);
  const sealed = deps.box.seal(botToken, TOKEN_PURPOSE);
  const { rows } = await deps.db.query<Row>(
    `insert into chat_connections (id, project_id, team_id, team_name, bot_token_sealed, created_at, updated_at)
     values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::timestamptz, $6::timestamptz)
     on conflict (project_id, team_id) where deleted_at is null
     do update set team_name = excluded.team_name, bot_token_sealed = excluded.bot_token_sealed,
                   updated_at = excluded.updated_at
     returning *`,
    [base62(22), input.projectId, teamId, teamName, sealed, deps.now()],
  );
  return toConnection(rows[0]!);
}

export interface ChatPosition {
  createdAt: string;
  id: string;
}

/** A project's live (not deleted) connections, newest first. */
export async function listChatConnections(
  db: Queryable,
  projectId: string,
  options: { limit: number; after?: ChatPosition },
): Promise<ChatConnection[]> {
  const { rows } = await db.query<Row>(
    `select * from chat_connections
      where project_id = $1::text and deleted_at is null
        and ($2::timestamptz is null or (created_at, id) < ($2::timestamptz, $3::text))
      order by created_at desc, id desc
      limit $4::int`,
    [projectId, options.after?.createdAt ?? null, options.after?.id ?? null, options.limit],
  );
  return rows.map(toConnection);
}

const notFound = (id: string) => new NotFoundError('chat_connection_not_found', `No chat connection ${id}.`);

/** Soft delete: alerts that still name it skip it. Deleting twice answers 404 the second time. */
export async function deleteChatConnection(
  deps: { db: Queryable; now(): Date },
  projectId: string,
  id: string,
) {
  const { rows } = await deps.db.query<Row>(
    `update chat_connections set deleted_at = $3::timestamptz
      where id = $1::text and project_id = $2::text and deleted_at is null returning *`,
    [id, projectId, deps.now()],
  );
  if (!rows[0]) throw notFound(id);
  return toConnection(rows[0]);
}

/** The bot token of a live connection of the project; 404 otherwise, 409 when it cannot be opened. */
export async function chatBotToken(deps: { db: Queryable; box: SecretBox }, projectId: string, id: string) {
  const { rows } = await deps.db.query<Row>(
    'select * from chat_connections where id = $1::text and project_id = $2::text and deleted_at is null',
    [id, projectId],
  );
  const row = rows[0];
  if (!row) throw notFound(id);
  return openForRoute(
    () => deps.box.open(row.bot_token_sealed, TOKEN_PURPOSE),
    `The bot token of chat connection ${id}`,
    'Connect the workspace again (`earshot chat add`): the connection keeps its id.',
    { location: 'path.id', message: 'bot token sealed under a key that is not configured', value: id },
  );
}

/** For the chat sender: the connection and its token, deleted ones included (to mark sends SKIPPED). */
export async function chatDestination(deps: { db: Queryable; box: SecretBox }, id: string) {
  const { rows } = await deps.db.query<Row>('select * from chat_connections where id = $1::text', [id]);
  const row = rows[0];
  if (!row) return null;
  return {
    ...toConnection(row),
    // Opened on use, so a deleted connection is recognised without its token.
    get botToken() {
      return deps.box.open(row.bot_token_sealed, TOKEN_PURPOSE);
    },
    deletedAt: row.deleted_at,
  };
}

export async function liveChatConnections(db: Queryable, projectId: string, ids: readonly string[]) {
  if (ids.length === 0) return new Set<string>();
  const { rows } = await db.query<{ id: string }>(
    `select id from chat_connections where project_id = $1::text and id = any($2::text[]) and deleted_at is null`,
    [projectId, ids],
  );
  return new Set(rows.map((row) => row.id));
}
