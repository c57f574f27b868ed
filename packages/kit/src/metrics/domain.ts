import { Counter, Gauge } from "prom-client";
import { metricsRegistry, withTimeout } from "./registry.js";

const liveCallSources = new Set<() => Promise<number>>();

new Gauge({
  name: "calls_live",
  help: "Calls not ended yet (queued, initiated, ringing, in progress), read from call-control's database when scraped",
  registers: [metricsRegistry],
  async collect() {
    const counts = await Promise.all([...liveCallSources].map((read) => withTimeout(read(), 500)));
    this.set(counts.reduce<number>((total, count) => total + (count ?? 0), 0));
  },
});

/** Reports live calls in `calls_live` (call-control); call the result to stop. */
export function trackLiveCalls(read: () => Promise<number>): () => void {
  liveCallSources.add(read);
  return () => void liveCallSources.delete(read);
}

const messageStatusChanges = new Counter({
  name: "messages_status_changes_total",
  help: "Messages moved to a status (queued on acceptance, then sending, sent, delivered, …)",
  labelNames: ["status"] as const,
  registers: [metricsRegistry],
});

export function countMessageStatus(status: string): void {
  messageStatusChanges.inc({ status });
}

const sipResponses = new Counter({
  name: "sip_responses_total",
  help: "Final responses call-control's SIP endpoint sent to requests, by method and status code",
  labelNames: ["method", "status"] as const,
  registers: [metricsRegistry],
});

/** Methods of RFC 3261 and its common extensions; any other token is counted as `other`. */
const sipMethods = new Set([
  "REGISTER",
  "OPTIONS",
  "INVITE",
  "ACK",
  "BYE",
  "CANCEL",
  "PRACK",
  "UPDATE",
  "INFO",
  "SUBSCRIBE",
  "NOTIFY",
  "REFER",
  "MESSAGE",
  "PUBLISH",
]);

/** Counts one final SIP response (call-control's endpoint; retransmissions are not counted). */
export function countSipResponse(method: string, status: number): void {
  sipResponses.inc({ method: sipMethods.has(method) ? method : "other", status: String(status) });
}
