import { consumeEvents, type EventBus, type QueueWorker } from "@switchboard/kit";
import type { MessagingContext } from "../context.js";
import { DISPATCH_GROUP } from "../outbox.js";
import { reserveSlot } from "./pacing.js";
import { publishSubmit } from "./submit-queue.js";
import { submitOnce } from "./submit-worker.js";

/** A slot this close counts as now: the message is submitted without another queue hop. */
const inlineWindowMs = 25;

/**
 * Takes each committed `message.queued` (relayed from the outbox) to the carrier at the pace
 * of its sending number: the message reserves its slot; when the slot is now, it is submitted
 * in this job (whose tries and backoff are the send's: a failed try throws and the group
 * retries it), otherwise a submit job is scheduled for the slot. Idempotent: a redelivered
 * event finds the slot reserved, the job id taken, or the message already sent.
 */
export function startDispatcher(ctx: MessagingContext, bus: EventBus): QueueWorker {
  return consumeEvents(
    bus,
    DISPATCH_GROUP,
    async (event, job) => {
      await dispatchMessage(ctx, bus, event.resource_id, {
        attempt: job.attempt,
        maxAttempts: job.maxAttempts,
        id: job.id,
      });
    },
    { concurrency: ctx.config.submitConcurrency },
  );
}

export async function dispatchMessage(
  ctx: MessagingContext,
  bus: EventBus,
  messageId: string,
  job?: { id: string; attempt: number; maxAttempts: number },
): Promise<void> {
  const slot = await reserveSlot(ctx.pool, messageId, 1_000 / ctx.config.senderRate);
  if (!slot) return;
  const delayMs = slot.getTime() - Date.now();
  if (job && delayMs <= inlineWindowMs) {
    await submitOnce(ctx, {
      ...job,
      queue: DISPATCH_GROUP,
      name: "message.submit",
      data: { messageId },
    });
    return;
  }
  await publishSubmit(bus, ctx.config, messageId, { delayMs, generation: 0 });
}
