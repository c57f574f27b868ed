import type { PoolClient } from "@switchboard/kit";
import type { MessagingContext } from "../context.js";
import { messageColumns, type MessageRow } from "../messages/rows.js";
import { transition } from "../messages/transitions.js";
import { bookTurn } from "./pacing.js";

/** A turn this close counts as now. */
const turnToleranceMs = 20;

export type Claim =
  /** This worker holds the message for one try. */
  | { kind: "claimed"; row: MessageRow; attempt: number; previousOutcomeUnknown: boolean }
  /** Another worker holds it: try again once its lease may have lapsed. */
  | { kind: "busy"; retryInMs: number }
  /** Not yet the message's turn in its sender's pace: submit at `turn`. */
  | { kind: "paced"; retryInMs: number; turn: Date }
  /** Nothing to do (sent already, terminal, or ended here: expired / recipient gone). */
  | { kind: "done" };

interface ClaimRow extends MessageRow {
  now: Date;
  opted_out: boolean;
  consent_status: string | null;
  tried: boolean;
  last_outcome: string | null;
}

/**
 * Takes a message for one try, in one transaction under the row lock (shared with other
 * deliveries' work: ctx.groupCommit, ctx.bookingCommit): a message past its TTL expires; a
 * recipient who opted out (or whose consent was revoked) since the send was accepted ends the
 * message failed; a message whose turn in its sender's pace (pacing.ts) has not come goes back
 * to wait for it; otherwise queued → sending (first try; SMS and MMS also
 * fix channel_used), a lease, the try counted and its send record written BEFORE the carrier
 * is called. A try whose record never got an outcome (the worker died, or the carrier's answer
 * was lost) makes the next one `previousOutcomeUnknown`.
 */
export async function claimMessage(
  ctx: MessagingContext,
  messageId: string,
  options: { first?: boolean } = {},
): Promise<Claim> {
  // The first claim books the turn, locking the sender's row: it runs with the bookings, one
  // batch at a time, so the other delivery work's batches lock only their messages' rows. A
  // claim known to be the first (`first`: the dispatcher's) goes there at once; any other goes
  // there only once it found the turn not booked.
  const booking = () => ctx.bookingCommit((client) => claimOn(ctx, client, messageId, true));
  const tried = options.first
    ? await booking()
    : await ctx.groupCommit((client) => claimOn(ctx, client, messageId, false));
  const claim = tried.kind === "unbooked" ? await booking() : tried;
  if (claim.kind === "unbooked") throw new Error(`message ${messageId} was claimed unbooked`);
  ctx.outbox.wake();
  return claim;
}

async function claimOn(
  ctx: MessagingContext,
  client: PoolClient,
  messageId: string,
  book: boolean,
): Promise<Claim | { kind: "unbooked" }> {
  const { rows } = await client.query<ClaimRow>(
    `SELECT ${messageColumns}, now() AS now,
            EXISTS (SELECT 1 FROM messaging.opt_outs o
                     WHERE o.account_id = m.account_id AND o.phone_number = m.to_number) AS opted_out,
            (SELECT c.status FROM messaging.consents c WHERE c.id = m.consent_id) AS consent_status,
            EXISTS (SELECT 1 FROM messaging.send_attempts a WHERE a.message_id = m.id) AS tried,
            (SELECT a.outcome FROM messaging.send_attempts a WHERE a.message_id = m.id
              ORDER BY a.attempt DESC LIMIT 1) AS last_outcome
       FROM messaging.messages m WHERE m.id = $1 FOR UPDATE OF m`,
    [messageId],
  );
  const row = rows[0];
  if (!row || (row.status !== "queued" && row.status !== "sending")) return { kind: "done" };
  const now = row.now.getTime();
  if (row.status === "sending" && row.lease_until && row.lease_until.getTime() > now) {
    return { kind: "busy", retryInMs: row.lease_until.getTime() - now + 50 };
  }
  if (row.expires_at && row.expires_at.getTime() <= now) {
    await transition(client, row.id, "expired", {
      error_code: "ttl-expired",
      error_message: "the message was not handed to the carrier before its TTL passed",
      lease_until: null,
    });
    return { kind: "done" };
  }
  const refusal = row.in_reply_to === null ? recipientRefusal(row) : undefined;
  if (refusal) {
    await transition(client, row.id, "failed", { ...refusal, lease_until: null });
    return { kind: "done" };
  }
  // The message's turn in its sender's pace: booked at its first claim, kept after.
  if (row.scheduled_at === null && !book) return { kind: "unbooked" };
  const turn =
    row.scheduled_at ??
    (await bookTurn(client, row.id, row.from_number, 1_000 / ctx.config.senderRate));
  const wait = turn.getTime() - now;
  if (wait > turnToleranceMs) return { kind: "paced", retryInMs: wait, turn };
  const previousOutcomeUnknown =
    row.tried && (row.last_outcome === null || row.last_outcome === "unknown");
  const lease = new Date(now + ctx.config.leaseMs);
  // The try's record, written with the move that counts it.
  const tryRecord = (source: string, param: (value: unknown) => string) =>
    `attempt AS (
       INSERT INTO messaging.send_attempts (message_id, attempt, carrier, channel)
       SELECT id, attempts, ${param(ctx.carrier.name)}, coalesce(channel_used, channel) FROM ${source})`;
  let current: MessageRow | undefined;
  if (row.status === "queued") {
    current = await transition(
      client,
      row.id,
      "sending",
      {
        lease_until: lease,
        attempts: "increment",
        ...(row.channel !== "rcs" && row.channel_used === null
          ? { channel_used: row.channel }
          : {}),
      },
      { with: (param) => [tryRecord("moved", param)] },
    );
  } else {
    const values: unknown[] = [row.id, lease];
    const claimed = await client.query<MessageRow>(
      `WITH claimed AS (
         UPDATE messaging.messages m SET attempts = attempts + 1, lease_until = $2, updated_at = now()
          WHERE m.id = $1 RETURNING ${messageColumns}
       ), ${tryRecord("claimed", (value) => `$${values.push(value)}`)}
       SELECT * FROM claimed`,
      values,
    );
    current = claimed.rows[0];
  }
  if (!current) return { kind: "done" };
  return { kind: "claimed", row: current, attempt: current.attempts, previousOutcomeUnknown };
}

/** Why the recipient may no longer be messaged, if so. */
function recipientRefusal(
  row: ClaimRow,
): { error_code: string; error_message: string } | undefined {
  if (row.opted_out) {
    return {
      error_code: "recipient-opted-out",
      error_message: "the recipient opted out before the message was sent",
    };
  }
  if (row.consent_id !== null && row.consent_status !== "granted") {
    return {
      error_code: "consent-revoked",
      error_message: "the consent was revoked before the message was sent",
    };
  }
  return undefined;
}
