import type { LatencyComparison } from "@switchboard/kit";

/** One scenario of the policies benchmark: `added` is the latency the policies add. */
export type ScenarioResult = LatencyComparison;

export interface PoliciesReport {
  generated_at: string;
  command: string;
  iterations: number;
  warmup: number;
  gap_ms: number;
  goals: { scenario: string; added_p50_ms: number; added_p99_ms: number; met: boolean }[];
  /** The round trips the policies are made of, each alone: where the added time goes. */
  floors_ms?: Record<string, { p50: number; p99: number }>;
  machine: Record<string, string | number>;
  scenarios: ScenarioResult[];
}

const ms = (value: number) => value.toFixed(3);

export function renderMarkdown(report: PoliciesReport): string {
  const rows = report.scenarios.map(
    (s) =>
      `| ${s.name} | ${ms(s.off.p50)} / ${ms(s.off.p99)} | ${ms(s.on.p50)} / ${ms(s.on.p99)} | **${ms(s.added.p50)}** | **${ms(s.added.p99)}** | ${ms(s.added.mean)} |`,
  );
  const scenarios = [
    ...new Map(report.scenarios.map((s) => [s.description, s.name.replace(/ \(.*\)$/, "")])),
  ].map(([description, name]) => `- **${name}**: ${description}`);
  const machine = Object.entries(report.machine).map(([key, value]) => `| ${key} | ${value} |`);
  return [
    "# Gateway traffic policies: added latency",
    "",
    `Generated ${report.generated_at} by \`${report.command}\`: ${report.iterations} measured requests per variant and scenario (after ${report.warmup} warm-up), one at a time (${report.gap_ms} ms apart) over a keep-alive loopback connection from a client on its own thread (its own event loop, as a separate client's); each row alternates the two variants request by request. The stored-response write that follows a reply (off the client's path) is awaited between requests, off the clock.`,
    "",
    "Variants: **off** = the same authenticated route with authentication only; **on** = authentication, then the per-permission token bucket (Redis, one EVALSHA) and the Idempotency-Key store (PostgreSQL), wired as the gateway wires them, with the key claims either committed without waiting for their WAL flush (the default: the operation's own synchronous commit, later in the same log, flushes them; `IDEMPOTENCY_SYNCHRONOUS_COMMIT=false`) or waiting for it (`IDEMPOTENCY_SYNCHRONOUS_COMMIT=true`); stored responses always wait for their flush, after the reply. The routes do no work of their own, so the difference is the policies' cost. All times in milliseconds.",
    "",
    "| scenario | off p50 / p99 | on p50 / p99 | added p50 | added p99 | added mean |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    ...scenarios,
    "",
    ...report.goals.map(
      (g) =>
        `- Goal, ${g.scenario}: added p50 < ${g.added_p50_ms} ms and p99 < ${g.added_p99_ms} ms — **${g.met ? "met" : "not met"}**.`,
    ),
    ...(report.floors_ms
      ? [
          "",
          "Where the time goes: the round trips the policies are made of, each measured alone with the same gap (p50 / p99 ms). A new key costs one bucket script and one claim on the client's path, sent together (the longer one counts, plus the other's send); the stored response is written after the reply has gone out.",
          "",
          "| step | p50 / p99 |",
          "|---|---|",
          ...Object.entries(report.floors_ms).map(
            ([step, f]) => `| ${step} | ${ms(f.p50)} / ${ms(f.p99)} |`,
          ),
        ]
      : []),
    "",
    "| machine | |",
    "|---|---|",
    ...machine,
    "",
  ].join("\n");
}
