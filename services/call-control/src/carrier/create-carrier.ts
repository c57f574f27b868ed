import type { Logger } from "@switchboard/kit";
import type { CallControlSettings } from "../config.js";
import { createRtpRelay } from "../sip/rtp-relay.js";
import type { RunningSip } from "../sip/sip-service.js";
import type { CarrierAdapter } from "../calls/carrier.js";
import { createSandboxCarrier } from "./sandbox/sandbox-carrier.js";
import { createSipCarrier } from "./sip/sip-carrier.js";
import type { InboundDelivery } from "./sip/sip-inbound.js";
import { createMediaRelay } from "./sip/sip-media.js";

/** VOICE_CARRIER (or CARRIER) selects the adapter: `sandbox` (the default outside production) or `sip`. */
export function createCarrier(
  settings: CallControlSettings,
  deps: { sip: RunningSip | undefined; delivery: InboundDelivery; logger: Logger },
): CarrierAdapter {
  switch (settings.carrier) {
    case "sandbox":
      return createSandboxCarrier(settings.sandbox);
    case "sip": {
      const trunk = settings.sip.trunk;
      // The settings require SIP_LISTEN and SIP_TRUNK_URI with the sip carrier.
      if (!deps.sip || !trunk)
        throw new Error("the sip carrier needs SIP_LISTEN and SIP_TRUNK_URI");
      const relay = settings.sip.rtpRelay;
      return createSipCarrier({
        sip: deps.sip,
        trunk,
        trunkAllow: settings.sip.trunkAllow,
        delivery: deps.delivery,
        media: createMediaRelay(relay ? createRtpRelay(relay) : undefined),
        domain: settings.sip.domain,
        logger: deps.logger,
      });
    }
  }
}
