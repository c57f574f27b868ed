import type { Backoff, EventBus } from "@switchboard/kit";
import type { MessagingConfig } from "../config.js";

/** The queue of messages ready to be handed to the carrier (one job per message and try run). */
export const SUBMIT_QUEUE = "messaging.submit";

export interface SubmitJob {
  messageId: string;
}

/** The tries a send gets and the backoff between them (MESSAGING_SEND_ATTEMPTS, _RETRY_*). */
export const sendRetry = (config: MessagingConfig): { attempts: number; backoff: Backoff } => ({
  attempts: config.sendAttempts,
  backoff: {
    type: "exponential",
    delayMs: config.retryBaseMs,
    maxDelayMs: config.retryMaxMs,
    jitter: 0.2,
  },
});

/**
 * Publishes a submit job of a message. `generation` tells a message's jobs apart: `t<turn>n<now>`
 * waits for the message's turn in its sender's pace, `s<tries>w<window>` is the sweeper's
 * re-publication of a stalled message (a repeat within the window is deduped by its job id).
 */
export async function publishSubmit(
  bus: EventBus,
  config: MessagingConfig,
  messageId: string,
  options: { delayMs: number; generation: number | string },
): Promise<void> {
  await bus.publish<SubmitJob>(
    SUBMIT_QUEUE,
    { name: "message.submit", data: { messageId } },
    {
      jobId: `submit.${messageId}.${options.generation}`,
      delay: Math.max(0, Math.round(options.delayMs)),
      ...sendRetry(config),
    },
  );
}
