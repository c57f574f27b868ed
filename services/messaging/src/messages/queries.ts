import {
  cursorId,
  e164Pattern,
  idPage,
  notFound,
  pageLimit,
  requireAccount,
} from "@switchboard/kit";
import { wire, type messaging } from "@switchboard/proto";
import type { MessagingContext } from "../context.js";
import { messageColumns, toMessage, type MessageRow } from "./rows.js";

export async function getMessage(
  ctx: MessagingContext,
  request: messaging.GetMessageRequest,
): Promise<messaging.Message> {
  requireAccount(request.accountId).throwIfAny();
  const { rows } = await ctx.pool.query<MessageRow>(
    `SELECT ${messageColumns} FROM messaging.messages m WHERE m.id = $1 AND m.account_id = $2`,
    [request.messageId, request.accountId],
  );
  if (!rows[0]) throw notFound("the message");
  return toMessage(rows[0]);
}

/** ListMessages: newest first, filtered by direction, status, to and from (all optional). */
export async function listMessages(
  ctx: MessagingContext,
  request: messaging.ListMessagesRequest,
): Promise<messaging.ListMessagesResponse> {
  const errors = requireAccount(request.accountId);
  const direction = request.direction && wire.messageDirection.spell(request.direction);
  if (request.direction !== undefined && direction === undefined) {
    errors.add("#/query/direction", "must be outbound or inbound");
  }
  const status = request.status && wire.messageStatus.spell(request.status);
  if (request.status !== undefined && status === undefined) {
    errors.add("#/query/status", `must be one of ${wire.messageStatus.values.join(", ")}`);
  }
  for (const [name, value] of [
    ["to", request.to],
    ["from", request.from],
  ] as const) {
    if (value !== undefined && !e164Pattern.test(value))
      errors.add(`#/query/${name}`, "must be an E.164 number");
  }
  errors.throwIfAny();
  const limit = pageLimit(request.limit);
  const filters = {
    direction,
    status,
    to_number: request.to,
    from_number: request.from,
  };
  const binding = `messages:${request.accountId}:${JSON.stringify(filters)}`;
  const values: unknown[] = [request.accountId, limit + 1];
  const where = ["m.account_id = $1"];
  for (const [column, value] of Object.entries(filters)) {
    if (value === undefined) continue;
    values.push(value);
    where.push(`m.${column} = $${values.length}`);
  }
  const after = cursorId(request.cursor, binding);
  if (after) {
    values.push(after);
    where.push(`m.id < $${values.length}`);
  }
  const { rows } = await ctx.pool.query<MessageRow>(
    `SELECT ${messageColumns} FROM messaging.messages m WHERE ${where.join(" AND ")}
      ORDER BY m.id DESC LIMIT $2`,
    values,
  );
  const page = idPage(rows, limit, binding, toMessage);
  return { messages: page.items, nextCursor: page.nextCursor, hasMore: page.hasMore };
}
