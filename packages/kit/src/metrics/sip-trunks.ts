import { Counter, Gauge } from "prom-client";
import { metricsRegistry } from "./registry.js";

/** A trunk address's state as its OPTIONS pings left it: 1 up, 0 taken out. */
export interface SipTrunkAddressState {
  address: string;
  up: boolean;
}

const healthSources = new Set<() => readonly SipTrunkAddressState[]>();

new Gauge({
  name: "sip_trunk_up",
  help: "Whether call-control's OPTIONS pings find a SIP trunk address answering (1) or have taken it out of new calls (0); only addresses being pinged",
  labelNames: ["address"] as const,
  registers: [metricsRegistry],
  collect() {
    const states = new Map<string, number>();
    for (const read of healthSources) {
      for (const { address, up } of read()) {
        states.set(address, Math.max(states.get(address) ?? 0, up ? 1 : 0));
      }
    }
    this.reset();
    for (const [address, value] of states) this.set({ address }, value);
  },
});

/** Reports trunk addresses' health in `sip_trunk_up`; call the result to stop. */
export function trackSipTrunkHealth(read: () => readonly SipTrunkAddressState[]): () => void {
  healthSources.add(read);
  return () => void healthSources.delete(read);
}

const failovers = new Counter({
  name: "sip_trunk_failovers_total",
  help: "Outbound calls' INVITEs moved from a trunk address to the next one, by what the first did: `status` (a 5xx or 408), `timeout` (no response in SIP_TRUNK_FAILOVER_TIMEOUT_MS, or Timer B), `transport` (could not be sent)",
  labelNames: ["reason"] as const,
  registers: [metricsRegistry],
});

export function countSipTrunkFailover(reason: "status" | "timeout" | "transport"): void {
  failovers.inc({ reason });
}
