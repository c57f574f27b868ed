import type { Checks } from "./checks.js";
import type { DrainSample } from "./drain.js";
import type { AtRest, WindowCommits } from "./measures.js";
import { statsFlushMs, type MessagesBenchSettings } from "./settings.js";
import type { LatencySummary } from "./stats.js";

/**
 * bench/results/messages.{json,md}: the report of `npm run bench:messages`, one row per carrier,
 * and the page written from it (`markdown`; `--render` writes it again from the JSON).
 */
export interface MessagesReport {
  generated_at: string;
  command: string;
  settings: MessagesBenchSettings;
  carriers: CarrierRun[];
  machine: {
    cpu: string;
    cores: number;
    memory_gb: number;
    node: string;
    postgres: string | undefined;
  };
}

/** A load's sends: how many, their answers, how fast and how long they took. */
export interface SendSummary {
  requests: number;
  statuses: Record<string, number>;
  accepted: number;
  elapsed_ms: number;
  accepted_per_second: number;
  latency_ms: LatencySummary;
}

/** The sends straight to the messaging service over gRPC (the sandbox run's). */
export interface ServiceAlone extends SendSummary {
  process_cpu_ms_per_accepted: number;
}

/** One carrier's measured run (phases.ts), before its name and network are added. */
export interface CarrierRow {
  send: SendSummary & {
    goal: { accepted_per_second: number; p99_ms: number };
    goal_met: boolean;
  };
  lifecycle: {
    drained: boolean;
    first_accept_to_last_delivery_ms: number;
    delivered_per_second: number;
    drain_ms_after_last_accept: number;
    pace_capacity_per_second: number;
    expected_ms_at_pace: number;
    timeline: DrainSample[];
  };
  cpu: {
    window_ms: number;
    ms_per_message: number;
    accepting_ms_per_message: number;
    delivering_ms_per_message: number;
    platform_process_ms_per_message: number;
    rest_ms_per_message: number;
    left_out: { load_generator_ms: number; network_ms: number; network_ms_per_message: number };
    platform_process_cores_while_accepting: number;
    /** Undefined when BENCH_IDLE_SECONDS is 0 (no measure at rest). */
    at_rest_share_ms_per_message: number | undefined;
    idle: AtRest | undefined;
  };
  postgres: WindowCommits & {
    commits_per_message: number;
    round_trips_per_message: number;
    round_trips_by_kind: { kind: string; per_message: number }[];
    at_rest_share_per_message: number | undefined;
  };
  checks: Checks;
  load_average_1m: { before: number; after_accepting: number };
  service_alone?: ServiceAlone;
}

/** A carrier's row in the report. */
export type CarrierRun = { carrier: string; network: string } & CarrierRow;

/** The headline table: one row per carrier. */
export function summaryTable(r: MessagesReport): string {
  const rows = r.carriers.map(
    (x) =>
      `| ${x.carrier} | **${x.send.accepted_per_second}** | ${x.send.latency_ms.p50} / ${x.send.latency_ms.p99} | **${x.lifecycle.delivered_per_second}** | **${x.cpu.ms_per_message}** | ${x.postgres.commits_per_message} | ${x.postgres.round_trips_per_message} | ${x.checks.lost} / ${x.checks.duplicates} |`,
  );
  return `| carrier | accepted/s | p50/p99 ms | delivered/s | cpu-ms per message | commits per message | round trips per message | lost/duplicates |
|---|---:|---|---:|---:|---:|---:|---|
${rows.join("\n")}`;
}

export function markdown(r: MessagesReport): string {
  const { settings } = r;
  const show = (value: unknown) => (value === undefined || value === false ? "—" : value);
  /** A row with one cell per carrier ("—" where the carrier has no such value). */
  const row = (label: string, cell: (x: CarrierRun) => unknown) =>
    `| ${label} | ${r.carriers.map((x) => show(cell(x))).join(" | ")} |`;
  const head = `| | ${r.carriers.map((x) => x.carrier).join(" | ")} |\n|---|${r.carriers.map(() => "---|").join("")}`;
  const service = r.carriers.find((x) => x.service_alone)?.service_alone;
  const idle = (x: CarrierRun, key: keyof AtRest) => x.cpu.idle?.[key];
  const paceCapacity = settings.senders * settings.senderRate;
  return `# Sending messages through the gateway, accept to delivery: the sandbox and the smpp carrier

Generated ${r.generated_at} by \`${r.command}\`.

For each carrier, one after the other, on a fresh PostgreSQL database with the same counts: the whole platform (\`startPlatform\`: every component in one process, as the embedded mode starts them) and the real Redis (BullMQ queues), with the gateway's policies on: an OAuth access token verified per request, the per-permission rate limit (raised so it never refuses), and the Idempotency-Key store with a new key per request. A load generator in a worker thread kept ${settings.concurrency} requests in flight over keep-alive connections: ${settings.requests} sends (after ${settings.warmup} warm-up) of one template (a single-segment text, unique per send) from ${settings.senders} sending numbers to ${settings.recipients} consenting recipients, all of which the network delivers. The **sandbox** carrier's network lives in the platform (a table of its database, receipts after ${settings.receiptDelayMs} ms); the **smpp** carrier binds as a transceiver to the test SMSC (\`@switchboard/test-smsc\`, receipts after ${settings.receiptDelayMs} ms), which runs in a child process, SMPP_THROUGHPUT ${settings.smppThroughput}/s so that the SMSC is never the bottleneck.

${summaryTable(r)}

- **accepted/s**, **p50/p99**: the 202s of \`POST /v1/api/messages/send\` through the gateway, while the dispatcher drains alongside.
- **delivered/s**: messages from the first accept of the measured run to its last \`delivered\` (the database's clock): the whole life, dispatcher, submit and receipt. Sends leave at their numbers' pace (MESSAGING_SENDER_RATE = ${settings.senderRate}/s each, ${paceCapacity}/s for ${settings.senders} numbers), so this is bounded by the pace, not by the platform.
- **cpu-ms per message**: the machine's CPU time (\`/proc/stat\`: every process — the platform, PostgreSQL, Redis) from the start of the load until the last delivery was seen, less the load generator's thread (\`/proc/thread-self/stat\`) and less the test SMSC's process (\`/proc/<pid>/stat\`, the smpp run), per accepted message — \`bench/floor-bench.mjs\`'s and the monolith anchor's (\`bench/monolith-anchor\`) measure, over the whole life instead of one request.
- **commits per message**: \`pg_stat_database.xact_commit\` of the platform's database over the same window, per accepted message: every component's transactions, read-only ones included. PostgreSQL counts a backend's commits only when it flushes its statistics (within 10 s of going idle), so the count is read after ${statsFlushMs / 1000} s at rest at both ends; the benchmark's own queries and the commits at rest (at the rate measured before the run) after the window's end are left out.
- **lost/duplicates**: over every send of the run (warm-up included): accepted but not stored, delivered and handed to the network once; handed over (or its \`message.sent\` event recorded) more than once.

## Where the CPU goes (ms per message)

${head}
${row("accepting: load start to the last 202 (the drain alongside)", (x) => x.cpu.accepting_ms_per_message)}
${row("delivering: last 202 to the last delivery", (x) => x.cpu.delivering_ms_per_message)}
${row("**whole life**", (x) => `**${x.cpu.ms_per_message}**`)}
${row("of which the platform's process", (x) => x.cpu.platform_process_ms_per_message)}
${row("of which PostgreSQL, Redis and the rest of the machine", (x) => x.cpu.rest_ms_per_message)}
${row("left out: the test SMSC's process", (x) => x.cpu.left_out.network_ms_per_message)}
${row("left out: the load generator's thread, ms in all", (x) => x.cpu.left_out.load_generator_ms)}
${row("measured window", (x) => `${x.cpu.window_ms} ms`)}
${row("the machine at rest over as long a window, per message", (x) => x.cpu.at_rest_share_ms_per_message)}
${row("whole life less the machine at rest", (x) => x.cpu.at_rest_share_ms_per_message !== undefined && Math.round((x.cpu.ms_per_message - x.cpu.at_rest_share_ms_per_message) * 1000) / 1000)}
${row("at rest before the run: cpu-ms per second (platform process)", (x) => idle(x, "cpu_ms_per_second") !== undefined && `${idle(x, "cpu_ms_per_second")} (${idle(x, "platform_process_cpu_ms_per_second")})`)}
${row("at rest before the run: commits per second", (x) => idle(x, "commits_per_second"))}
${row("the platform's process while accepting, in cores", (x) => x.cpu.platform_process_cores_while_accepting)}

The window lasts as long as the pace makes it (see delivered/s), so the cost of the machine at rest (the platform's pollers and timers, PostgreSQL and Redis idling, and whatever else the machine runs) is counted for the whole of it; measured for ${settings.idleSeconds} s before each run (after ${statsFlushMs / 1000} s at rest), its share of the whole life is the row "the machine at rest over as long a window".

## Accepting

${head}
${row("accepted (202)", (x) => `${x.send.accepted} of ${x.send.requests} (${JSON.stringify(x.send.statuses)})`)}
${row("elapsed", (x) => `${x.send.elapsed_ms} ms`)}
${row("**accepted per second**", (x) => `**${x.send.accepted_per_second}**`)}
${row("latency p50 / p90 / p99 / max, ms", (x) => `${x.send.latency_ms.p50} / ${x.send.latency_ms.p90} / ${x.send.latency_ms.p99} / ${x.send.latency_ms.max}`)}
${row("goal (≥ 1000/s at p99 < 50 ms)", (x) => (x.send.goal_met ? "**met**" : "**not met**"))}
${
  service
    ? `
## The messaging service alone (sandbox run)

The same sends straight to MessagingService over gRPC (no gateway: no token, rate limit, Idempotency-Key store or request record; the service still stores each key with its message), ${service.requests} of them at the same concurrency, before the sandbox's measured run.

| | |
|---|---|
| accepted | ${service.accepted} of ${service.requests} (${JSON.stringify(service.statuses)}) |
| **accepted per second** | **${service.accepted_per_second}** |
| latency p50 / p90 / p99 / max | ${service.latency_ms.p50} / ${service.latency_ms.p90} / ${service.latency_ms.p99} / ${service.latency_ms.max} ms |
| process CPU per accepted send (the drain alongside, and the load generator) | ${service.process_cpu_ms_per_accepted} ms |
`
    : ""
}
## Delivering

${head}
${row("drained", (x) => (x.lifecycle.drained ? "yes" : "**no**"))}
${row("first accept to last delivery", (x) => `${x.lifecycle.first_accept_to_last_delivery_ms} ms`)}
${row(`at the pace alone (accepted ÷ ${paceCapacity}/s)`, (x) => `${x.lifecycle.expected_ms_at_pace} ms`)}
${row("**delivered per second**", (x) => `**${x.lifecycle.delivered_per_second}**`)}
${row("last 202 to the last delivery seen", (x) => `${x.lifecycle.drain_ms_after_last_accept} ms`)}
${row("PostgreSQL commits in the window", (x) => x.postgres.commits)}
${row("**PostgreSQL commits per message**", (x) => `**${x.postgres.commits_per_message}**`)}
${row("of which at rest (the pollers, over as long a window)", (x) => x.postgres.at_rest_share_per_message)}
${row("left out: the benchmark's queries / at rest after the window", (x) => `${x.postgres.bench_queries_left_out} / ${x.postgres.at_rest_after_the_window_left_out}`)}
${row("**PostgreSQL round trips per message** (statements sent, whole life)", (x) => `**${x.postgres.round_trips_per_message}**`)}

**PostgreSQL round trips per message**: every statement the platform's pg clients sent (\`pg.Client.prototype.query\` wrapped in the benchmark's process, as \`npm run bench:calls\` counts them; the benchmark's own pool left out) from the load's start until the last delivery and every event relayed, per accepted message. By kind, per message:

${r.carriers.map((x) => `- ${x.carrier}: ${x.postgres.round_trips_by_kind.map((k) => `${k.kind} ${k.per_message}`).join("; ")}`).join("\n")}

## None lost, none sent twice

Over every send of the run, warm-up${service ? " and the service-alone sends" : ""} included.

${head}
${row("accepted", (x) => x.checks.accepted)}
${row("stored", (x) => x.checks.stored)}
${row("delivered", (x) => x.checks.delivered)}
${row("handed to the network (sandbox rows; SMSC accepted submits)", (x) => x.checks.carrier_sends)}
${row("most submits of one message (sandbox)", (x) => x.checks.max_submits_per_message)}
${row("distinct message ids at the SMSC", (x) => x.checks.smsc_distinct_message_ids)}
${row("distinct texts at the SMSC", (x) => x.checks.smsc_distinct_texts)}
${row("messages whose provider id is an SMSC submit", (x) => x.checks.messages_with_their_submit)}
${row("submits the SMSC throttled / refused", (x) => x.checks.smsc_throttled !== undefined && `${x.checks.smsc_throttled} / ${x.checks.smsc_refused}`)}
${row("receipt attempts by result (SMSC)", (x) => x.checks.receipt_attempts && JSON.stringify(x.checks.receipt_attempts))}
${row(`most submits by one number in one clock second (its pace: ${settings.senderRate}/s)`, (x) => x.checks.max_submits_by_one_number_in_a_second)}
${row(`most submits in one clock second, all numbers (pace: ${paceCapacity}/s)`, (x) => x.checks.max_submits_in_a_second)}
${row("message.sent events (usage facts)", (x) => x.checks.sent_events)}
${row("events not yet relayed", (x) => x.checks.unpublished_events)}
${row("**none lost**", (x) => `**${x.checks.none_lost}**`)}
${row("**none sent twice**", (x) => `**${x.checks.none_sent_twice}**`)}

## Reading these numbers

Every component ran in one Node.js process, on one event loop and so on one core at most (the load generator had a thread of its own). The accept rate is bounded by that one process, not by a lock or a queue${service ? `: the messaging service alone accepted ${service.accepted_per_second}/s under the same conditions` : ""}. The mesh mode runs each component in its own process. Submits are paced by booking each message's turn at its number's rate; when the workers fall behind, a late message goes as soon as a worker is free, so one clock second can carry a few more than the rate (see the table above). The machine was shared with other work: its CPU time counts every process on it, so a busy machine inflates cpu-ms per message.

| machine | |
|---|---|
| cpu | ${r.machine.cpu} |
| cores | ${r.machine.cores} (shared) |
| load average (1 min) before the run / after accepting | ${r.carriers.map((x) => `${x.carrier} ${x.load_average_1m.before} / ${x.load_average_1m.after_accepting}`).join("; ")} |
| memory | ${r.machine.memory_gb} GB |
| node | ${r.machine.node} |
| postgres | ${r.machine.postgres} |
`;
}
