import { withTransaction } from "@switchboard/kit";
import type { MessagingContext } from "../context.js";
import { messageSegments } from "../encoding/segments.js";
import { messageColumns, type MessageRow } from "../messages/rows.js";
import { transition } from "../messages/transitions.js";
import { finishAttempt } from "./attempts.js";

/**
 * The channel a message goes out on. SMS and MMS go as asked. RCS goes as RCS when the
 * recipient is RCS-capable now; otherwise it falls back to the request's `fallback` (recorded
 * on the message: channel_used, fallback_applied, and the SMS segments it now counts), or,
 * with no fallback allowed, fails with `rcs-not-capable`. Decided once; returns the updated row
 * or undefined when the message ended here.
 */
export async function chooseChannel(
  ctx: MessagingContext,
  row: MessageRow,
  attempt: number,
): Promise<MessageRow | undefined> {
  if (row.channel_used !== null) return row;
  let channel = row.channel;
  let fallbackApplied = false;
  if (!ctx.carrier.channels.includes(row.channel) && row.fallback !== null) {
    // The send check let it through only because the carrier sends its fallback.
    channel = row.fallback;
    fallbackApplied = true;
  } else if (row.channel === "rcs" && !(await ctx.carrier.rcsCapable(row.to_number))) {
    if (row.fallback === null) {
      await withTransaction(ctx.pool, async (client) => {
        await finishAttempt(client, row.id, attempt, "skipped", { errorCode: "rcs-not-capable" });
        await transition(client, row.id, "failed", {
          channel_used: "rcs",
          error_code: "rcs-not-capable",
          error_message: "the recipient cannot receive RCS and the message allowed no fallback",
          lease_until: null,
        });
      });
      ctx.outbox.wake();
      return undefined;
    }
    channel = row.fallback;
    fallbackApplied = true;
  }
  const { encoding, segments } = messageSegments(channel, row.body);
  // Under the claim's lease no other worker decides; coalesce keeps a first decision anyway.
  const { rows } = await ctx.pool.query<MessageRow>(
    `UPDATE messaging.messages m
        SET channel_used = coalesce(m.channel_used, $2),
            fallback_applied = CASE WHEN m.channel_used IS NULL THEN $3 ELSE m.fallback_applied END,
            encoding = CASE WHEN m.channel_used IS NULL THEN $4 ELSE m.encoding END,
            segments = CASE WHEN m.channel_used IS NULL THEN $5 ELSE m.segments END
      WHERE m.id = $1 RETURNING ${messageColumns}`,
    [row.id, channel, fallbackApplied, encoding, segments],
  );
  await finishAttemptChannel(ctx, row.id, attempt, rows[0]?.channel_used ?? channel);
  return rows[0];
}

/** The try's record names the channel it actually used. */
async function finishAttemptChannel(
  ctx: MessagingContext,
  messageId: string,
  attempt: number,
  channel: string,
) {
  await ctx.pool.query(
    "UPDATE messaging.send_attempts SET channel = $3 WHERE message_id = $1 AND attempt = $2",
    [messageId, attempt, channel],
  );
}
