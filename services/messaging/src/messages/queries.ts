import {
  createdKey,
  createdKeyColumn,
  createdOrderBinding,
  createdOrderSql,
  e164Pattern,
  keysetPage,
  notFound,
  pageLimit,
  readCreatedOrder,
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

/**
 * ListMessages: newest first by creation (then id) unless `oldest_first`, filtered by direction,
 * status, to, from and a creation window (all optional); keyset-paged on (created_at, id).
 */
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
  const order = readCreatedOrder(request, errors);
  errors.throwIfAny();
  const limit = pageLimit(request.limit);
  const filters = {
    direction,
    status,
    to_number: request.to,
    from_number: request.from,
  };
  const binding = `messages:${request.accountId}:${JSON.stringify([filters, ...createdOrderBinding(order)])}`;
  const values: unknown[] = [request.accountId];
  const param = (value: unknown) => `$${values.push(value)}`;
  const where = ["m.account_id = $1"];
  for (const [column, value] of Object.entries(filters)) {
    if (value !== undefined) where.push(`m.${column} = ${param(value)}`);
  }
  const sql = createdOrderSql(order, "m", request.cursor, binding, param);
  const { rows } = await ctx.pool.query<MessageRow & { created_key: string }>(
    `SELECT ${messageColumns}, ${createdKeyColumn("m")} AS created_key FROM messaging.messages m
      WHERE ${[...where, ...sql.where].join(" AND ")}
      ORDER BY ${sql.orderBy} LIMIT ${param(limit + 1)}`,
    values,
  );
  const page = keysetPage(rows, limit, binding, toMessage, createdKey);
  return { messages: page.items, nextCursor: page.nextCursor, hasMore: page.hasMore };
}
