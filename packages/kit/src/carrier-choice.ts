import { z } from "zod";

/** Every carrier a deployment may name in CARRIER; each side implements some of them. */
export const carrierNames = ["sandbox", "sip", "smpp"] as const;
export type CarrierName = (typeof carrierNames)[number];

/**
 * CARRIER, read by call-control and messaging alike (docs/api.md "Carriers"): one name for
 * both sides; VOICE_CARRIER and MESSAGING_CARRIER override it per side.
 */
export const carrierSetting = z
  .enum(carrierNames)
  .optional()
  .describe(
    "carrier adapter of voice and messaging: `sandbox` (the simulated network, with /api/sandbox/*), `sip` (voice), `smpp` (messaging); required in production",
  );

/**
 * The per-side overrides of CARRIER and the sandbox's call length, defined once: call-control
 * and messaging choose their adapter by them, and the gateway reads the same settings to know
 * which sandbox routes and smoke steps exist (and how long the smoke's call steps take).
 */
export const carrierSideSettings = {
  VOICE_CARRIER: z
    .string()
    .optional()
    .describe(
      "the voice side's carrier adapter when it differs from CARRIER: `sandbox` or `sip` (with SIP_LISTEN and SIP_TRUNK_URI)",
    ),
  MESSAGING_CARRIER: z
    .string()
    .optional()
    .describe(
      "the messaging side's carrier adapter when it differs from CARRIER: `sandbox` or `smpp`",
    ),
  SANDBOX_CALL_SECONDS: z.coerce
    .number()
    .min(0)
    .max(86_400)
    .default(2)
    .describe(
      "how long an answered sandbox call lasts (decimals allowed); the gateway sizes the agent smoke's call steps by it",
    ),
};

/**
 * The carrier a side runs, as read by a process that only needs to know it (the gateway's
 * sandbox routes and smoke steps): its override, else CARRIER when the side has such an
 * adapter, else the sandbox outside production; undefined when the services would refuse it.
 */
export function sideCarrier<Available extends CarrierName>(
  value: { NODE_ENV: string; CARRIER?: CarrierName | undefined },
  override: string | undefined,
  available: readonly Available[],
): Available | undefined {
  const isAvailable = (name: string | undefined): name is Available =>
    name !== undefined && (available as readonly string[]).includes(name);
  if (override !== undefined) return isAvailable(override) ? override : undefined;
  if (isAvailable(value.CARRIER)) return value.CARRIER;
  return value.NODE_ENV === "production" ? undefined : ("sandbox" as Available);
}

/**
 * The carrier one side uses: its override, else CARRIER when the side has an adapter of that
 * name, else (outside production) the sandbox. A deployment that names a carrier the side
 * cannot run (CARRIER=smpp seen by the voice side in production) is refused, never quietly
 * sandboxed: a production platform whose calls went to the simulated network would look fine
 * and place nothing.
 */
export function chooseCarrier<Available extends CarrierName>(
  value: { NODE_ENV: string; CARRIER?: CarrierName | undefined },
  override: { name: string; value: string | undefined },
  available: readonly Available[],
  /** Where the refusals go; without it the choice is made silently (after validation). */
  ctx?: z.RefinementCtx,
): Available {
  const isAvailable = (name: string | undefined): name is Available =>
    name !== undefined && (available as readonly string[]).includes(name);
  if (override.value !== undefined) {
    if (isAvailable(override.value)) return override.value;
    ctx?.addIssue({
      code: "custom",
      path: [override.name],
      message: `has no "${override.value}" adapter; available: ${available.join(", ")}`,
    });
    return available[0] as Available;
  }
  if (isAvailable(value.CARRIER)) return value.CARRIER;
  if (value.NODE_ENV === "production") {
    ctx?.addIssue({
      code: "custom",
      path: [value.CARRIER === undefined ? "CARRIER" : override.name],
      message:
        value.CARRIER === undefined
          ? "is required in production"
          : `is required in production when CARRIER=${value.CARRIER} (this side has no such adapter; available: ${available.join(", ")})`,
    });
  }
  return "sandbox" as Available;
}
