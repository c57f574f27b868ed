import { defineComponent, runningComponent } from "@switchboard/kit";
import { callControlSettings } from "./config.js";
import { startCallControl } from "./server.js";

/** Calls, seats, agents and routes. */
export const callControlComponent = defineComponent({
  name: "call-control",
  grpcPort: 50052,
  adminPort: 9092,
  needs: ["inventory"],
  poolSize: 10,
  settings: callControlSettings,
  start: async ({ addresses, ownProcess, ...deps }, settings) => {
    const callControl = await startCallControl({
      ...deps,
      inventoryAddress: addresses.inventory!,
      settings,
    });
    // In its own process a SIGTERM takes no new calls; the live ones run on here for up to
    // CALL_DRAIN_SECONDS, then are left to their durable timers, which the next process (or
    // another replica) fires.
    const callDrainMs = ownProcess ? settings.callDrainMs : 0;
    return {
      ...runningComponent(callControl),
      stop: () => callControl.stop({ callDrainMs }),
      drainMs: callDrainMs,
    };
  },
});
