import type { CpuShare } from "./cpu-profile.js";
import type { LatencyStats as Stats } from "@switchboard/kit";

export interface CallsBenchReport {
  generated_at: string;
  command: string;
  concurrency: number;
  warmup_seconds: number;
  /** The measured window asked for; each carrier's run says how long it lasted. */
  measured_seconds: number;
  sandbox_call_seconds: number;
  seats: number;
  goal: { placed_per_second: number; p99_ms: number };
  /** One run per voice carrier, in the order they ran, each on a fresh database. */
  carriers: CallsCarrierRun[];
  machine: Record<string, unknown> & { load_average_at_end: number[] };
}

export interface CallsCarrierRun {
  carrier: "sandbox" | "sip";
  /** Where its calls went. */
  network: string;
  measured_seconds: number;
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
  /** How the window's calls ended (read once every call had ended). */
  outcomes: {
    calls: number;
    completed: number;
    not_completed: number;
    by_outcome: {
      status: string;
      hangup_cause: string | null;
      hangup_source: string | null;
      calls: number;
    }[];
    sip_dialogs_open: number;
  };
  /** The SIPps' own counts of calls (warm-up included), from their last screen; null on the sandbox. */
  network_counts: {
    trunk: { successful: number | null; failed: number | null };
    phone: { successful: number | null; failed: number | null };
  } | null;
  /** cpu-ms per call placed in the window, over the calls' whole life (cpuPerCall). */
  cpu: {
    window_ms: number;
    ms_per_call: number;
    placing_ms_per_call: number;
    after_window_ms_per_call: number;
    platform_process_ms_per_call: number;
    rest_ms_per_call: number;
    left_out: { load_generator_ms: number; network_ms: number; network_ms_per_call: number };
  };
  /**
   * Statements the platform sent to PostgreSQL (each a round trip) from the window's start until
   * every call had ended, per call placed in the window, and by kind (verb and tables).
   */
  postgres_round_trips: {
    per_call: number;
    total: number;
    by_kind: { kind: string; per_call: number }[];
  };
  /** Where the platform process spent the measured window (with --profile). */
  cpu_during_window?: CpuShare[];
  load_average_at_end: number[];
}

const fmt = (s: Stats) => `${s.p50} / ${s.p90} / ${s.p99} / ${s.p999} / ${s.max}`;

export function renderReport(r: CallsBenchReport): string {
  const runs = r.carriers;
  const row = (label: string, cell: (x: CallsCarrierRun) => unknown) =>
    `| ${label} | ${runs.map((x) => String(cell(x) ?? "—")).join(" | ")} |`;
  const met = (x: CallsCarrierRun) =>
    x.placed_per_second >= r.goal.placed_per_second && x.latency_ms.p99 < r.goal.p99_ms;
  const bound = (x: CallsCarrierRun) =>
    x.after_window.seconds_until_every_call_ended === null
      ? " (a lower bound: calls were still live)"
      : "";
  const counts = (c: { successful: number | null; failed: number | null }) =>
    `${c.successful ?? "?"} successful, ${c.failed ?? "?"} failed`;
  const load = r.machine.load_average_at_end;
  const busy = (load[0] ?? 0) > 3;
  return `# Outbound calls through the gateway: the sandbox and the sip carrier

Generated ${r.generated_at} by \`${r.command}\`: for each voice carrier, one after the other, the same load on a fresh PostgreSQL database: a closed loop of ${r.concurrency} concurrent keep-alive connections (driven from a worker thread), ${r.warmup_seconds} s warm-up, then ${r.measured_seconds} s measured.

Each request is \`POST /v1/api/calls/outbound\` with a bearer access token (EdDSA JWT verified), a new \`Idempotency-Key\` (claimed and its response stored in PostgreSQL), the Redis token bucket of (account, calls:write), and the request's usage record — the whole platform in one process (\`startPlatform\`: every service on loopback gRPC) on real PostgreSQL and Redis. Each call is the real thing: the caller id checked with the inventory over gRPC, agent and seat resolved, the seat's concurrency claimed, an ES256 PASSporT signed, the call and its \`call.placed\` event committed. In the background during the load every call is dialled, rings, is answered and completes after ${r.sandbox_call_seconds} s, and its five events are relayed to BullMQ and consumed (usage, webhooks). ${r.seats} seats (\`max_concurrent_calls\` 10 000), each with its number (attestation A).

- **sandbox**: the sandbox network, in the platform process (durable timers: ring, answer, complete after \`SANDBOX_CALL_SECONDS\`).
- **sip**: call-control's SIP endpoint on loopback UDP (\`VOICE_CARRIER=sip\`): it INVITEs the seat's phone — one SIPp registered (digest MD5) as every seat, answering (\`test/sip/phone-answer.xml\`) — then the trunk — SIPp answering and sending BYE after ${r.sandbox_call_seconds} s (\`test/sip/trunk-answer-bye.xml\`) — and BYEs the phone when the trunk hangs up. The SIPps run in their own processes; their CPU time is the network's and is left out.

| | ${runs.map((x) => x.carrier).join(" | ")} |
|---|${runs.map(() => "---:").join("|")}|
${row("**calls placed per second** (201)", (x) => `**${x.placed_per_second}**`)}
${row("latency p50 / p99 (ms), all responses", (x) => `${x.latency_ms.p50} / ${x.latency_ms.p99}`)}
${row("latency p50 / p90 / p99 / p99.9 / max (ms), 201 only", (x) => fmt(x.latency_201_ms))}
${row("responses by status", (x) =>
  Object.entries(x.statuses)
    .map(([k, v]) => `${k}: ${v}`)
    .join(", "),
)}
${row(`goal: ≥ ${r.goal.placed_per_second} calls/s at p99 < ${r.goal.p99_ms} ms`, (x) => (met(x) ? "met" : "not met"))}
${row("measured window (s)", (x) => x.measured_seconds)}
${row("**cpu-ms per call, whole life**", (x) => `**${x.cpu.ms_per_call}**${bound(x)}`)}
${row("… placing: the window, the calls' background alongside", (x) => x.cpu.placing_ms_per_call)}
${row("… after the window: the rest of their lives", (x) => x.cpu.after_window_ms_per_call)}
${row("of which the platform's process", (x) => x.cpu.platform_process_ms_per_call)}
${row("of which PostgreSQL, Redis and the rest of the machine", (x) => x.cpu.rest_ms_per_call)}
${row("left out: the SIPps' processes, ms per call", (x) =>
  x.network_counts === null ? "—" : x.cpu.left_out.network_ms_per_call,
)}
${row("left out: the load generator's thread, ms in all", (x) => x.cpu.left_out.load_generator_ms)}
${row("**PostgreSQL round trips per call** (statements sent, whole life)", (x) => `**${x.postgres_round_trips.per_call}**`)}
${row("measured from the window's start to the last call's end (ms)", (x) => x.cpu.window_ms)}
${row("window's calls that ended completed", (x) => `${x.outcomes.completed} of ${x.outcomes.calls}`)}
${row("**window's calls that did not end completed**", (x) => `**${x.outcomes.not_completed}**`)}
${row("how they ended", (x) =>
  x.outcomes.by_outcome
    .map((o) => `${o.status} (${o.hangup_cause ?? "—"}, ${o.hangup_source ?? "—"}): ${o.calls}`)
    .join("; "),
)}
${row("SIP dialogs left open", (x) => x.outcomes.sip_dialogs_open)}
${row("the SIPps' counts (warm-up included): trunk; phone", (x) =>
  x.network_counts ? `${counts(x.network_counts.trunk)}; ${counts(x.network_counts.phone)}` : "—",
)}
${row(
  "when the window closed: calls live / ended / timers overdue / events not relayed",
  (x) =>
    `${x.after_window.live} / ${x.after_window.ended} / ${x.after_window.timers_due} / ${x.after_window.outbox_unpublished}`,
)}
${row("every call ended, its events relayed and consumed, after the window (s)", (x) =>
  x.after_window.seconds_until_every_call_ended === null
    ? "not within 120 s"
    : x.after_window.seconds_until_every_call_ended,
)}
${row("load average (1, 5, 15 min) at the run's end", (x) => x.load_average_at_end.join(", "))}

**cpu-ms per call**, over the whole life of the calls placed in the window: the machine's CPU time (\`/proc/stat\`: every process — the platform, PostgreSQL, Redis) from the window's start until every call had ended and its events were relayed and consumed, less the load generator's thread (\`/proc/thread-self/stat\`) and, on sip, less the SIPp processes (\`/proc/<pid>/stat\` utime + stime of each at the window's start and end, as \`npm run bench:messages\` leaves out its SMSC), per call placed. The warm-up's calls ended before the window opened.
${busy ? `\n**Note:** the load average was ${load.join(", ")} at the end: the machine was busy with other work during this run (more runnable processes than its ${String(r.machine.cores)} cores). Throughput and latency are worse than on a quiet machine, and since \`/proc/stat\` counts every process, the other work's CPU time inside the window is counted too (in "the rest of the machine"): compare the carriers with each other, from this same run, not with figures of another run.\n` : ""}
**PostgreSQL round trips per call**: every statement the platform's pg clients sent (\`pg.Client.prototype.query\` wrapped in the benchmark's process; its own observer's polling left out) from the window's start until every call had ended, per call placed in the window — the statements of the requests, of the calls' lives, of the relays and of the usage and webhook consumers. By kind, per call:

${runs.map((x) => `- ${x.carrier}: ${x.postgres_round_trips.by_kind.map((k) => `${k.kind} ${k.per_call}`).join("; ")}`).join("\n")}

${runs
  .filter((x) => x.cpu_during_window)
  .map((x) => cpuSection(x.carrier, x.cpu_during_window!))
  .join("")}| machine | |
|---|---|
${Object.entries(r.machine)
  .map(([k, v]) => `| ${k} | ${Array.isArray(v) ? v.join(", ") : String(v)} |`)
  .join("\n")}
`;
}

function cpuSection(carrier: string, shares: CpuShare[]): string {
  return `**${carrier}**: the whole platform runs in this one Node.js process (one event loop, so at most one of the two cores; PostgreSQL and Redis use the rest). Where its time went during the measured window (V8 sampling CPU profiler, on for this run; self time by the nearest workspace or npm package on the stack):

| owner | ms | % |
|---|---|---|
${shares.map((s) => `| ${s.owner} | ${s.ms} | ${s.percent} |`).join("\n")}

`;
}
