import type pg from "pg";
import { appendEventCtes, countMessageStatus, noteOutboxWrite } from "@switchboard/kit";
import type { wire } from "@switchboard/proto";
import { SCHEMA } from "../outbox.js";
import { messageColumns, messageEventDataSql, type MessageRow } from "./rows.js";

export type MessageStatus = wire.MessageStatusValue;

/**
 * The outbound state machine: queued → sending → sent → delivered | undelivered, with failed
 * reachable until the network reports on the message, expired until the carrier has it or
 * when the network reports that it expired (an SMPP receipt `stat:EXPIRED`), and
 * read (RCS only) after sent or delivered, since receipts may arrive out of order. Terminal
 * states have no entry here and never change (the database trigger enforces the same).
 */
export const allowedFrom: Record<Exclude<MessageStatus, "queued" | "received">, MessageStatus[]> = {
  sending: ["queued"],
  sent: ["sending"],
  delivered: ["sent"],
  undelivered: ["sent"],
  failed: ["queued", "sending", "sent"],
  expired: ["queued", "sending", "sent"],
  read: ["sent", "delivered"],
};

/** Columns a transition may set beside status and updated_at. */
export type TransitionFields = Partial<{
  channel_used: string;
  fallback_applied: boolean;
  encoding: string;
  segments: number;
  error_code: string | null;
  error_message: string | null;
  provider_message_id: string;
  lease_until: Date | null;
  attempts: "increment";
  sent_at: "now";
  delivered_at: "now";
  read_at: "now";
}>;

export interface TransitionOptions {
  /**
   * Writes that go with the move, in its statement: CTEs (`name AS (statement)`), which may read
   * `moved` (the message as moved; no row when the guard refused). `param` adds a value.
   */
  with?: (param: (value: unknown) => string) => string[];
}

/**
 * Moves one message (named by its id, or by the carrier's id of it) to `to` if (and only if)
 * its status is one `to` may follow, on the caller's transaction, and appends `message.<to>` with the message as it now is — in the same statement
 * (messageEventDataSql). Returns the updated row, or undefined when the guard refused (the
 * message was elsewhere already). Its commit wakes the
 * service's outbox relay (noteOutboxWrite).
 */
export async function transition(
  client: pg.ClientBase,
  message: string | { providerMessageId: string },
  to: keyof typeof allowedFrom,
  fields: TransitionFields = {},
  options: TransitionOptions = {},
): Promise<MessageRow | undefined> {
  const byId = typeof message === "string";
  const values: unknown[] = [byId ? message : message.providerMessageId, to, allowedFrom[to]];
  const sets = ["status = $2", "updated_at = now()"];
  for (const [column, value] of Object.entries(fields)) {
    if (value === "now") sets.push(`${column} = now()`);
    else if (value === "increment") sets.push(`${column} = ${column} + 1`);
    else {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    }
  }
  if (to === "delivered" || to === "read") sets.push(`${to}_at = coalesce(${to}_at, now())`);
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  // The move and its event in one statement: the event is appended only when the guard held.
  const event = appendEventCtes(
    SCHEMA,
    {
      source: "moved",
      type: `message.${to}`,
      accountId: "moved.account_id",
      resourceId: "moved.id",
      data: messageEventDataSql("moved"),
    },
    param,
  );
  const alongside = (options.with?.(param) ?? []).map((cte) => `,\n     ${cte}`).join("");
  const { rows } = await client.query<MessageRow>(
    `WITH moved AS (
       UPDATE messaging.messages m SET ${sets.join(", ")}
        WHERE m.${byId ? "id" : "provider_message_id"} = $1 AND m.status = ANY($3::text[]) ${to === "read" ? "AND m.channel_used = 'rcs'" : ""}
        RETURNING ${messageColumns}
     ), ${event}${alongside}
     SELECT * FROM moved`,
    values,
  );
  const row = rows[0];
  if (!row) return undefined;
  countMessageStatus(to);
  noteOutboxWrite(client, SCHEMA);
  return row;
}
