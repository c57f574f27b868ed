import {
  RetryLaterError,
  withTransaction,
  type EventBus,
  type Job,
  type QueueWorker,
} from "@switchboard/kit";
import { CarrierError } from "../carrier/carrier.js";
import type { MessagingContext } from "../context.js";
import type { Encoding } from "../encoding/segments.js";
import type { MessageRow } from "../messages/rows.js";
import { transition } from "../messages/transitions.js";
import { isChannel } from "../validation.js";
import { finishAttempt, finishAttemptSql } from "./attempts.js";
import { chooseChannel } from "./channel-choice.js";
import { claimMessage } from "./claim.js";
import { publishSubmit, SUBMIT_QUEUE, type SubmitJob } from "./submit-queue.js";

/**
 * Hands messages to the carrier, never one twice. Each try: claim (lease + send record written
 * first), choose the channel (RCS fallback), submit with the message id as client reference,
 * then record the outcome and `sent` in one transaction (shared with other deliveries' work:
 * ctx.groupCommit). A transient carrier error is retried by the queue with backoff; the last
 * try, or a permanent refusal, ends the message `failed`.
 * After a try whose outcome is unknown the message is submitted again only to a carrier that
 * dedupes on the client reference; any other carrier's message fails `outcome-unknown` rather
 * than risk a duplicate (mayResend: the one place that rule lives).
 */
export function startSubmitWorker(ctx: MessagingContext, bus: EventBus): QueueWorker {
  return bus.consume<SubmitJob>(SUBMIT_QUEUE, (job) => submitOnce(ctx, job), {
    concurrency: ctx.config.submitConcurrency,
  });
}

/** One try of a message; `first`: the message's first claim (the dispatcher's, see claimMessage). */
export async function submitOnce(
  ctx: MessagingContext,
  job: Job<SubmitJob>,
  options: { first?: boolean } = {},
): Promise<void> {
  const claim = await claimMessage(ctx, job.data.messageId, options);
  if (claim.kind === "done") return;
  if (claim.kind === "paced") {
    // Wait for the turn in a new job (one per turn), so the wait costs none of this job's tries.
    await publishSubmit(ctx.bus, ctx.config, job.data.messageId, {
      delayMs: claim.retryInMs,
      // Unique per wait: a job woken a hair early waits again rather than being deduped away.
      generation: `t${claim.turn.getTime()}n${Date.now()}`,
    });
    return;
  }
  if (claim.kind === "busy")
    throw new RetryLaterError("another worker holds the message", claim.retryInMs);
  const { attempt } = claim;
  if (!mayResend(ctx, claim.previousOutcomeUnknown)) {
    await fail(ctx, claim.row, attempt, "skipped", {
      code: "outcome-unknown",
      message: "an earlier try's outcome is unknown and the carrier cannot recognise a repeat",
    });
    return;
  }
  const row = await chooseChannel(ctx, claim.row, attempt);
  if (!row) return;
  const channel = row.channel_used ?? row.channel;
  if (!isChannel(channel)) throw new Error(`message ${row.id} has no valid channel`);
  let providerMessageId: string;
  let partIds: string[] = [];
  try {
    ({ providerMessageId, partIds = [] } = await ctx.carrier.submit({
      clientRef: row.id,
      attempt,
      channel,
      from: row.from_number,
      to: row.to_number,
      body: row.body,
      mediaUrls: channel === "sms" ? [] : row.media_urls,
      encoding: row.encoding as Encoding,
      segments: row.segments,
      expiresAt: row.expires_at,
    }));
  } catch (error) {
    const carrierError = error instanceof CarrierError ? error : undefined;
    const code = carrierError?.code ?? "carrier-error";
    if (carrierError?.kind === "permanent") {
      await fail(ctx, row, attempt, "rejected", { code, message: carrierError.message });
      return;
    }
    const outcome = carrierError?.outcome === "not_sent" ? "error" : "unknown";
    if (!mayResend(ctx, outcome === "unknown")) {
      await fail(ctx, row, attempt, outcome, {
        code: "outcome-unknown",
        message: `the carrier may have taken the message (${code}) and cannot recognise a repeat`,
      });
      return;
    }
    if (job.attempt >= job.maxAttempts) {
      await fail(ctx, row, attempt, outcome, {
        code: "carrier-retries-exhausted",
        message: `the carrier did not take the message in ${job.maxAttempts} tries (last: ${code})`,
      });
      return;
    }
    await withTransaction(ctx.pool, async (client) => {
      await finishAttempt(client, row.id, attempt, outcome, { errorCode: code });
      // Release the lease: the queue's retry (after its backoff) claims the message again.
      await client.query(
        "UPDATE messaging.messages SET lease_until = NULL, updated_at = now() WHERE id = $1 AND status = 'sending'",
        [row.id],
      );
    });
    throw error;
  }
  await ctx.groupCommit((client) =>
    transition(
      client,
      row.id,
      "sent",
      { provider_message_id: providerMessageId, sent_at: "now", lease_until: null },
      {
        with: (param) => [
          `finished AS (${finishAttemptSql(row.id, attempt, "accepted", { providerMessageId }, param)})`,
          ...(partIds.length > 0
            ? [
                `parts AS (
                   INSERT INTO messaging.message_parts (provider_part_id, message_id, part)
                   SELECT id, ${param(row.id)}, ordinality + 1
                     FROM unnest(${param(partIds)}::text[]) WITH ORDINALITY AS p(id, ordinality)
                   ON CONFLICT (provider_part_id) DO NOTHING)`,
              ]
            : []),
        ],
      },
    ),
  );
}

/**
 * Whether a message may be submitted again: always after a try the network cannot have taken,
 * after one whose outcome is unknown only to a carrier that recognises a repeat.
 */
function mayResend(ctx: MessagingContext, outcomeUnknown: boolean): boolean {
  return !outcomeUnknown || ctx.carrier.idempotentSubmit;
}

async function fail(
  ctx: MessagingContext,
  row: MessageRow,
  attempt: number,
  outcome: "rejected" | "error" | "unknown" | "skipped",
  error: { code: string; message: string },
): Promise<void> {
  await withTransaction(ctx.pool, async (client) => {
    await finishAttempt(client, row.id, attempt, outcome, { errorCode: error.code });
    await transition(client, row.id, "failed", {
      error_code: error.code,
      error_message: error.message,
      lease_until: null,
    });
  });
  ctx.outbox.wake();
}
