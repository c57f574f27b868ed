import { type PoolClient, type Queryable, requireAccount } from "@switchboard/kit";
import type { messaging } from "@switchboard/proto";
import type { MessagingContext } from "./context.js";
import { iso } from "./validation.js";

const maxReplyCharacters = 320;

interface SettingsRow {
  help_text: string | null;
  stop_reply_text: string | null;
  start_reply_text: string | null;
  updated_at: Date | null;
}

/** The account's keyword replies; the service defaults stand in for what it has not set. */
export async function readSettings(
  ctx: MessagingContext,
  accountId: string,
  db: Queryable | PoolClient = ctx.pool,
): Promise<messaging.Settings> {
  const { rows } = await db.query<SettingsRow>(
    "SELECT help_text, stop_reply_text, start_reply_text, updated_at FROM messaging.account_settings WHERE account_id = $1",
    [accountId],
  );
  const row = rows[0];
  const defaults = ctx.config.defaults;
  return {
    helpText: row?.help_text ?? defaults.helpText,
    stopReplyText: row?.stop_reply_text ?? defaults.stopReplyText,
    startReplyText: row?.start_reply_text ?? defaults.startReplyText,
    updatedAt: iso(row?.updated_at),
  };
}

export async function getSettings(ctx: MessagingContext, request: messaging.GetSettingsRequest) {
  requireAccount(request.accountId).throwIfAny();
  return readSettings(ctx, request.accountId);
}

/** UpdateSettings: sets the given texts; an empty string restores the default. */
export async function updateSettings(
  ctx: MessagingContext,
  request: messaging.UpdateSettingsRequest,
): Promise<messaging.Settings> {
  const errors = requireAccount(request.accountId);
  const fields = {
    help_text: request.helpText,
    stop_reply_text: request.stopReplyText,
    start_reply_text: request.startReplyText,
  };
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined && [...value].length > maxReplyCharacters) {
      errors.add(`#/${name}`, `must be at most ${maxReplyCharacters} characters`);
    }
  }
  errors.throwIfAny();
  const value = (text: string | undefined) =>
    text === undefined ? undefined : text.trim() === "" ? null : text;
  await ctx.pool.query(
    `INSERT INTO messaging.account_settings AS s (account_id, help_text, stop_reply_text, start_reply_text)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (account_id) DO UPDATE SET
       help_text = CASE WHEN $5 THEN EXCLUDED.help_text ELSE s.help_text END,
       stop_reply_text = CASE WHEN $6 THEN EXCLUDED.stop_reply_text ELSE s.stop_reply_text END,
       start_reply_text = CASE WHEN $7 THEN EXCLUDED.start_reply_text ELSE s.start_reply_text END,
       updated_at = now()`,
    [
      request.accountId,
      value(fields.help_text) ?? null,
      value(fields.stop_reply_text) ?? null,
      value(fields.start_reply_text) ?? null,
      fields.help_text !== undefined,
      fields.stop_reply_text !== undefined,
      fields.start_reply_text !== undefined,
    ],
  );
  return readSettings(ctx, request.accountId);
}
