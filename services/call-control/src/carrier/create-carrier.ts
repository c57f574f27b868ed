import type { CallControlSettings } from "../config.js";
import type { CarrierAdapter } from "./carrier.js";
import { createSandboxCarrier } from "./sandbox-carrier.js";

/** CARRIER selects the adapter; `sandbox` (the default outside production) is the only one yet. */
export function createCarrier(settings: CallControlSettings): CarrierAdapter {
  switch (settings.carrier) {
    case "sandbox":
      return createSandboxCarrier(settings.sandbox);
  }
}
