import { consumeEvents, type EventBus, type QueueWorker } from "@switchboard/kit";
import type { MessagingContext } from "../context.js";
import { DISPATCH_GROUP } from "../outbox.js";
import { publishSubmit } from "./submit-queue.js";
import { submitOnce } from "./submit-worker.js";

/**
 * Takes each committed `message.queued` (relayed from the outbox) towards the carrier: the
 * job tries the message at once (its tries and backoff are the send's: a failed try throws and
 * the group retries it). The first try books the message's turn in its sender's pace; a turn
 * still to come is waited for in a delayed submit job. Idempotent: a redelivered event finds
 * the turn booked, or the message sent.
 */
export function startDispatcher(ctx: MessagingContext, bus: EventBus): QueueWorker {
  return consumeEvents(
    bus,
    DISPATCH_GROUP,
    async (event, job) => {
      const submit = {
        id: job.id,
        queue: job.queue,
        name: "message.submit",
        data: { messageId: event.resource_id },
        attempt: job.attempt,
        maxAttempts: job.maxAttempts,
      };
      // The message's first claim: it books the message's turn.
      await submitOnce(ctx, submit, { first: true });
    },
    { concurrency: ctx.config.submitConcurrency },
  );
}

/** Puts a message whose job was lost back in the submit queue (the sweeper). */
export async function dispatchMessage(
  ctx: MessagingContext,
  bus: EventBus,
  messageId: string,
  generation: string,
): Promise<void> {
  await publishSubmit(bus, ctx.config, messageId, { delayMs: 0, generation });
}
