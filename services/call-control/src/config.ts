import {
  type CarrierName,
  carrierSetting,
  carrierSideSettings,
  chooseCarrier,
  env,
  loadConfig,
  publicBaseUrl,
  requireInProduction,
  secretSettings,
  signingKeySecretOf,
} from "@switchboard/kit";
import { stirShakenCertificatePath } from "@switchboard/proto";
import { z } from "zod";
import {
  checkSipCarrierSettings,
  checkSipSettings,
  sipSettings,
  sipSettingsFields,
} from "./sip/sip-settings.js";

/**
 * Settings of the call-control service that every run mode shares (embedded, tests and mesh
 * read them from the environment; mesh adds its listen address and database).
 */
export const callControlSettings = z
  .object({
    ...secretSettings,
    CARRIER: carrierSetting,
    VOICE_CARRIER: carrierSideSettings.VOICE_CARRIER,
    SANDBOX_CALL_SECONDS: carrierSideSettings.SANDBOX_CALL_SECONDS,
    SANDBOX_RING_DELAY_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(100)
      .describe("sandbox network: INVITE to first response, ringing to answer"),
    INBOUND_RING_TIMEOUT_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(600)
      .default(30)
      .describe("an unanswered inbound call ends `no_answer` / `timeout`"),
    PUBLIC_URL: env
      .optionalUrl()
      .describe(
        "the gateway's public base URL: token issuer, errors_url, links, the STIR/SHAKEN x5u (default http://localhost:$PORT)",
      ),
    PORT: env
      .port(8080)
      .describe("the gateway's port: without PUBLIC_URL the x5u is the gateway's local address"),
    STIR_SHAKEN_SPC: z
      .string()
      .regex(/^[A-Za-z0-9]{1,16}$/, "must be 1–16 letters or digits")
      .default("SWBD")
      .describe("service provider code in the STIR/SHAKEN certificate's TNAuthList"),
    CALL_TIMER_POLL_MS: z.coerce
      .number()
      .int()
      .min(10)
      .max(60_000)
      .default(250)
      .describe("durable call timers: polling floor"),
    CALL_TIMER_BATCH_SIZE: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000)
      .default(100)
      .describe("durable call timers: timers claimed at once"),
    INVENTORY_DEADLINE_MS: z.coerce
      .number()
      .int()
      .min(50)
      .max(60_000)
      .default(2_000)
      .describe("deadline of the service's calls to the inventory"),
    /** After SIGTERM, how long calls already live keep running here before timers take over. */
    CALL_DRAIN_SECONDS: z.coerce
      .number()
      .min(0)
      .max(3_600)
      .default(60)
      .describe("call-control: how long live calls keep running in a draining process"),
    ...sipSettingsFields,
  })
  .superRefine((value, ctx) => {
    requireInProduction(value, ctx);
    if (voiceCarrier(value, ctx) === "sip") checkSipCarrierSettings(value, ctx);
    checkSipSettings(value, ctx);
  })
  .transform((value) => {
    return {
      carrier: voiceCarrier(value),
      sandbox: {
        callSeconds: value.SANDBOX_CALL_SECONDS,
        ringDelayMs: value.SANDBOX_RING_DELAY_MS,
      },
      inboundRingTimeoutSeconds: value.INBOUND_RING_TIMEOUT_SECONDS,
      /** The PASSporT's x5u: where the gateway serves this service's certificate. */
      certificateUrl: `${publicBaseUrl(value.PUBLIC_URL, value.PORT)}${stirShakenCertificatePath}`,
      signingKeySecret: signingKeySecretOf(value),
      serviceProviderCode: value.STIR_SHAKEN_SPC,
      timers: { pollIntervalMs: value.CALL_TIMER_POLL_MS, batchSize: value.CALL_TIMER_BATCH_SIZE },
      inventoryDeadlineMs: value.INVENTORY_DEADLINE_MS,
      callDrainMs: value.CALL_DRAIN_SECONDS * 1000,
      sip: sipSettings(value),
    };
  });

/** The voice side's carrier (docs/api.md "Carriers"); with `ctx`, refusals are reported there. */
function voiceCarrier(
  value: {
    NODE_ENV: string;
    CARRIER?: CarrierName | undefined;
    VOICE_CARRIER?: string | undefined;
  },
  ctx?: z.RefinementCtx,
) {
  return chooseCarrier(
    value,
    { name: "VOICE_CARRIER", value: value.VOICE_CARRIER },
    ["sandbox", "sip"] as const,
    ctx,
  );
}

export type CallControlSettings = z.infer<typeof callControlSettings>;

export const loadCallControlSettings = (
  source: NodeJS.ProcessEnv = process.env,
): CallControlSettings => loadConfig(callControlSettings, source);
