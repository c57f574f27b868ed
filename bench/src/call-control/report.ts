import type { CpuShare } from "./cpu-profile.js";
import type { LatencyStats as Stats } from "@switchboard/kit";

export interface CallsBenchReport {
  generated_at: string;
  command: string;
  concurrency: number;
  warmup_seconds: number;
  measured_seconds: number;
  sandbox_call_seconds: number;
  seats: number;
  statuses: Record<string, number>;
  placed_per_second: number;
  latency_ms: Stats;
  latency_201_ms: Stats;
  after_window: {
    live: number;
    ended: number;
    timers_due: number;
    outbox_unpublished: number;
    seconds_until_every_call_ended: number | null;
  };
  /** cpu-ms per call placed in the window, over the calls' whole life (cpuPerCall). */
  cpu: {
    window_ms: number;
    ms_per_call: number;
    placing_ms_per_call: number;
    after_window_ms_per_call: number;
    platform_process_ms_per_call: number;
    rest_ms_per_call: number;
    load_generator_ms: number;
  };
  goal: { placed_per_second: number; p99_ms: number };
  /** Where the platform process spent the measured window (with --profile). */
  cpu_during_window?: CpuShare[];
  machine: Record<string, unknown>;
}

const fmt = (s: Stats) => `${s.p50} / ${s.p90} / ${s.p99} / ${s.p999} / ${s.max}`;

export function renderReport(r: CallsBenchReport): string {
  const met = r.placed_per_second >= r.goal.placed_per_second && r.latency_ms.p99 < r.goal.p99_ms;
  return `# Outbound calls through the gateway

Generated ${r.generated_at} by \`${r.command}\`: a closed loop of ${r.concurrency} concurrent keep-alive connections (driven from a worker thread), ${r.warmup_seconds} s warm-up, then ${r.measured_seconds} s measured.

Each request is \`POST /v1/api/calls/outbound\` with a bearer access token (EdDSA JWT verified), a new \`Idempotency-Key\` (claimed and its response stored in PostgreSQL), the Redis token bucket of (account, calls:write), and the request's usage record — the whole platform in one process (\`startPlatform\`: every service on loopback gRPC) on a fresh real PostgreSQL database and real Redis. Each call is the real thing: the caller id checked with the inventory over gRPC, agent and seat resolved, the seat's concurrency claimed, an ES256 PASSporT signed, the call and its \`call.placed\` event committed. In the background during the load every call is dialled on the sandbox network, rings, is answered and completes after ${r.sandbox_call_seconds} s (durable timers), and its five events are relayed to BullMQ and consumed (usage, webhooks). ${r.seats} seats, each with its number (attestation A).

| | value |
|---|---|
| calls placed per second (201) | **${r.placed_per_second}** |
| latency p50 / p90 / p99 / p99.9 / max (ms), all responses | ${fmt(r.latency_ms)} |
| latency p50 / p90 / p99 / p99.9 / max (ms), 201 only | ${fmt(r.latency_201_ms)} |
| responses by status | ${Object.entries(r.statuses)
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ")} |
| goal | ≥ ${r.goal.placed_per_second} calls/s at p99 < ${r.goal.p99_ms} ms — **${met ? "met" : "not met"}** |

Background work when the window closed: ${r.after_window.live} calls still live, ${r.after_window.ended} ended, ${r.after_window.timers_due} timers overdue, ${r.after_window.outbox_unpublished} events not yet relayed; every call had ended, its events relayed and consumed ${r.after_window.seconds_until_every_call_ended === null ? "(not within 120 s)" : `${r.after_window.seconds_until_every_call_ended} s later`}.

${cpuPerCallSection(r)}
${r.cpu_during_window ? cpuSection(r.cpu_during_window) : ""}| machine | |
|---|---|
${Object.entries(r.machine)
  .map(([k, v]) => `| ${k} | ${Array.isArray(v) ? v.join(", ") : String(v)} |`)
  .join("\n")}
`;
}

function cpuPerCallSection(r: CallsBenchReport): string {
  const c = r.cpu;
  const bound =
    r.after_window.seconds_until_every_call_ended === null
      ? " (a lower bound: calls were still live)"
      : "";
  return `**cpu-ms per call**, over the whole life of the calls placed in the window: the machine's CPU time (\`/proc/stat\`: every process — the platform, PostgreSQL, Redis) from the window's start until every call had ended and its events were relayed and consumed, less the load generator's thread (\`/proc/thread-self/stat\`), per call placed — as \`npm run bench:messages\` measures a message's whole life. The warm-up's calls ended before the window opened.

| cpu-ms per call | |
|---|---|
| placing: the window, the calls' background alongside | ${c.placing_ms_per_call} |
| after the window: the rest of their lives | ${c.after_window_ms_per_call} |
| **whole life** | **${c.ms_per_call}**${bound} |
| of which the platform's process | ${c.platform_process_ms_per_call} |
| of which PostgreSQL, Redis and the rest of the machine | ${c.rest_ms_per_call} |
| left out: the load generator's thread, ms in all | ${c.load_generator_ms} |
| measured from the window's start to the last call's end | ${c.window_ms} ms |
`;
}

function cpuSection(shares: CpuShare[]): string {
  return `The whole platform runs in this one Node.js process (one event loop, so at most one of the two cores; PostgreSQL and Redis use the rest). Where its time went during the measured window (V8 sampling CPU profiler, on for this run; self time by the nearest workspace or npm package on the stack):

| owner | ms | % |
|---|---|---|
${shares.map((s) => `| ${s.owner} | ${s.ms} | ${s.percent} |`).join("\n")}

`;
}
