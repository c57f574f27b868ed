import {
  createdOrderBinding,
  e164Pattern,
  listByCreation,
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
  const page = await listByCreation<MessageRow, messaging.Message>(
    ctx.pool,
    {
      from: "messaging.messages m",
      alias: "m",
      columns: messageColumns,
      filters: {
        "m.account_id": request.accountId,
        ...Object.fromEntries(Object.entries(filters).map(([column, v]) => [`m.${column}`, v])),
      },
      order,
      cursor: request.cursor,
      binding,
      limit,
    },
    toMessage,
  );
  return { messages: page.items, nextCursor: page.nextCursor, hasMore: page.hasMore };
}
