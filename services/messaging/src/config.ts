import { z } from "zod";
import { type SmppConfig, smppConfigOf, smppSettings } from "./carrier/smpp/smpp-settings.js";
import {
  carrierSetting,
  carrierSideSettings,
  chooseCarrier,
  loadConfig,
  requireInProduction,
  secretSettings,
  signingKeySecretOf,
} from "@switchboard/kit";

const ms = (fallback: number, min = 0, max = 86_400_000) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/**
 * The messaging service's settings, read from the environment in the mesh entrypoint and in
 * the embedded/test composition alike. Timers are configuration so tests compress them.
 */
const settingsObject = z.object({
  ...secretSettings,
  CARRIER: carrierSetting,
  MESSAGING_CARRIER: carrierSideSettings.MESSAGING_CARRIER,
  ...smppSettings,
  SANDBOX_RECEIPT_DELAY_MS: ms(1_000, 0, 600_000).describe(
    "delay before a sandbox delivery receipt",
  ),
  MESSAGING_SENDER_RATE: z.coerce
    .number()
    .positive()
    .max(10_000)
    .default(20)
    .describe("sends per second per sending number"),
  MESSAGING_SEND_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(50)
    .default(8)
    .describe("tries per message"),
  MESSAGING_RETRY_BASE_MS: ms(1_000, 1, 3_600_000).describe("carrier retry backoff: first delay"),
  MESSAGING_RETRY_MAX_MS: ms(300_000, 1, 86_400_000).describe(
    "carrier retry backoff: longest delay",
  ),
  MESSAGING_SUBMIT_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(512)
    .default(32)
    .describe("concurrent sends in progress"),
  MESSAGING_DELIVERY_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(8)
    .describe("database connections of the sends in progress"),
  MESSAGING_LEASE_MS: ms(30_000, 100, 3_600_000).describe("how long one try holds a message"),
  MESSAGING_SWEEP_INTERVAL_MS: ms(30_000, 50, 3_600_000).describe("sweeper period"),
  MESSAGING_REDISPATCH_AFTER_MS: ms(60_000, 100, 86_400_000).describe(
    "when a stalled message is re-dispatched",
  ),
  MESSAGING_RECEIPT_OVERDUE_MS: ms(120_000, 100, 86_400_000).describe(
    "when a missing receipt is asked for again",
  ),
  MESSAGING_RELAYS: z.coerce.number().int().min(1).max(8).default(2).describe("outbox relays"),
  MESSAGING_RELAY_POLL_MS: ms(100, 5, 60_000).describe("outbox relays' polling period"),
  MESSAGING_GROUP_COMMIT_MS: ms(10, 1, 1_000).describe(
    "how long delivery work (claims, sent, receipts) waits to share a commit",
  ),
  MESSAGING_GROUP_COMMIT_BATCHES: z.coerce
    .number()
    .int()
    .min(1)
    .max(32)
    .default(4)
    .describe("delivery group commits in flight at once"),
  INVENTORY_DEADLINE_MS: ms(2_000, 50, 60_000).describe(
    "deadline of the service's calls to the inventory",
  ),
  MESSAGING_DEFAULT_HELP_TEXT: z
    .string()
    .min(1)
    .max(320)
    .default("Switchboard messages. Reply STOP to unsubscribe. Msg & data rates may apply.")
    .describe("default reply to HELP"),
  MESSAGING_DEFAULT_STOP_TEXT: z
    .string()
    .min(1)
    .max(320)
    .default(
      "You are unsubscribed and will receive no further messages. Reply START to resubscribe.",
    )
    .describe("default reply to STOP"),
  MESSAGING_DEFAULT_START_TEXT: z
    .string()
    .min(1)
    .max(320)
    .default("You are subscribed again. Reply HELP for help, STOP to unsubscribe.")
    .describe("default reply to START"),
});

export const messagingSettings = settingsObject
  .superRefine((value, ctx) => {
    requireInProduction(value, ctx);
    carrierOf(value, ctx);
  })
  .transform((value) => ({
    ...carrierOf(value),
    signingKeySecret: signingKeySecretOf(value),
    sandboxReceiptDelayMs: value.SANDBOX_RECEIPT_DELAY_MS,
    senderRate: value.MESSAGING_SENDER_RATE,
    sendAttempts: value.MESSAGING_SEND_ATTEMPTS,
    retryBaseMs: value.MESSAGING_RETRY_BASE_MS,
    retryMaxMs: value.MESSAGING_RETRY_MAX_MS,
    submitConcurrency: value.MESSAGING_SUBMIT_CONCURRENCY,
    deliveryPoolSize: value.MESSAGING_DELIVERY_POOL_SIZE,
    leaseMs: value.MESSAGING_LEASE_MS,
    sweepIntervalMs: value.MESSAGING_SWEEP_INTERVAL_MS,
    redispatchAfterMs: value.MESSAGING_REDISPATCH_AFTER_MS,
    receiptOverdueMs: value.MESSAGING_RECEIPT_OVERDUE_MS,
    relays: value.MESSAGING_RELAYS,
    relayPollMs: value.MESSAGING_RELAY_POLL_MS,
    groupCommitMs: value.MESSAGING_GROUP_COMMIT_MS,
    groupCommitBatches: value.MESSAGING_GROUP_COMMIT_BATCHES,
    inventoryDeadlineMs: value.INVENTORY_DEADLINE_MS,
    defaults: {
      helpText: value.MESSAGING_DEFAULT_HELP_TEXT,
      stopReplyText: value.MESSAGING_DEFAULT_STOP_TEXT,
      startReplyText: value.MESSAGING_DEFAULT_START_TEXT,
    },
  }));

/** The carrier this side uses and, for `smpp`, its connection (required then). */
function carrierOf(
  value: z.infer<typeof settingsObject>,
  ctx?: z.RefinementCtx,
): { carrier: "sandbox" } | { carrier: "smpp"; smpp: SmppConfig } {
  const carrier = chooseCarrier(
    value,
    { name: "MESSAGING_CARRIER", value: value.MESSAGING_CARRIER },
    ["sandbox", "smpp"] as const,
    ctx,
  );
  if (carrier === "sandbox") return { carrier };
  return { carrier, smpp: smppConfigOf(value, ctx) };
}

export type MessagingConfig = z.infer<typeof messagingSettings>;

/** Parses the messaging settings; throws a ConfigError naming every bad variable. */
export const loadMessagingConfig = (source: NodeJS.ProcessEnv = process.env): MessagingConfig =>
  loadConfig(messagingSettings, source);
