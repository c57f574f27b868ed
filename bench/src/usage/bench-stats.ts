/** The Markdown report of the usage benchmark (milliseconds). */
import type { LatencyComparison, LatencyStats } from "@switchboard/kit";

export interface IngestResult {
  records_per_job: number;
  records: number;
  seconds: number;
  records_per_second: number;
}

export type LatencyResult = LatencyComparison;

export interface LoadResult {
  clients: number;
  seconds: number;
  requests: number;
  requests_per_second: number;
  /** Records per `usage.records` job the gateway formed (group commit). */
  records_per_job: number;
}

/** What one record hand-off cannot beat, measured in the same run. */
export interface Floor {
  redis_ping: LatencyStats;
  bullmq_add: LatencyStats;
}

export interface UsageReport {
  generated_at: string;
  command: string;
  goals: { name: string; target: string; measured: string; met: boolean }[];
  signing_only_per_second: { inline: number; threaded: number; threads: number };
  ingest: IngestResult[];
  latency: LatencyResult[];
  load: LoadResult;
  floor: Floor;
  machine: Record<string, string | number>;
}

const ms = (value: number) => value.toFixed(3);
const int = (value: number) => Math.round(value).toLocaleString("en-US");

export function renderMarkdown(r: UsageReport): string {
  const machine = Object.entries(r.machine).map(([key, value]) => `| ${key} | ${value} |`);
  return [
    "# Usage ledger: ingest throughput and the latency of the record path",
    "",
    `Generated ${r.generated_at} by \`${r.command}\` on real PostgreSQL and Redis (BullMQ), one run.`,
    "",
    "## Goals",
    "",
    "| goal | target | measured | |",
    "|---|---|---|---|",
    ...r.goals.map(
      (g) => `| ${g.name} | ${g.target} | ${g.measured} | ${g.met ? "met" : "**not met**"} |`,
    ),
    "",
    "## Records ingested and signed per second",
    "",
    "The `usage.records` queue is filled first (the usage service stopped), then the service is started and timed until every record is signed (Ed25519, detached JWS over RFC 8785 JSON) and committed — a sustained drain of a backlog, startup included. One process: BullMQ worker (256 jobs at once), group-committed multi-row INSERTs (up to 500 records, two batches in flight), canonical JSON in the main thread and Ed25519 signatures on worker threads.",
    "",
    "| records per job | records | seconds | records/s |",
    "|---|---|---|---|",
    ...r.ingest.map(
      (i) =>
        `| ${i.records_per_job} | ${int(i.records)} | ${i.seconds.toFixed(2)} | **${int(i.records_per_second)}** |`,
    ),
    "",
    `Signing alone (canonical JSON + Ed25519): ${int(r.signing_only_per_second.inline)} records/s in the main thread; ${int(r.signing_only_per_second.threaded)} records/s with the signatures on ${r.signing_only_per_second.threads} worker thread(s), as the service runs.`,
    "",
    `Records per job are what the gateway's group commit produces: one record per job when requests come one at a time; under load, records that arrive while a publish is in flight share the next job. Observed: ${r.load.clients} concurrent clients for ${r.load.seconds} s → ${int(r.load.requests_per_second)} requests/s through one gateway, **${r.load.records_per_job.toFixed(2)} records per job**.`,
    "",
    "## Latency the record path adds to a request",
    "",
    "The same request against two gateways on the same database, Redis and usage service: **off** = `USAGE_RECORDS=false`; **on** = the record path (the reply waits until its record's job is in Redis). One request at a time over a kept-alive loopback connection, the variants interleaved request by request. Times in ms.",
    "",
    "| request | off p50 / p99 | on p50 / p99 | added p50 | added p90 | added p99 |",
    "|---|---|---|---|---|---|",
    ...r.latency.map(
      (l) =>
        `| ${l.name} | ${ms(l.off.p50)} / ${ms(l.off.p99)} | ${ms(l.on.p50)} / ${ms(l.on.p99)} | **${ms(l.added.p50)}** | ${ms(l.added.p90)} | ${ms(l.added.p99)} |`,
    ),
    "",
    ...r.latency.map((l) => `- **${l.name}**: ${l.description}`),
    "",
    `The record path's cost is one BullMQ add (a Lua script on Redis) while the reply waits. Measured in the same run, one at a time: Redis PING p50 ${ms(r.floor.redis_ping.p50)} / p99 ${ms(r.floor.redis_ping.p99)} ms; a bare BullMQ add of a record job p50 ${ms(r.floor.bullmq_add.p50)} / p99 ${ms(r.floor.bullmq_add.p99)} ms. The usage service ran as its own process (its mesh entrypoint); the gateways and the measuring client share one process. On a machine whose cores are contended (see the load average below) every round trip waits for the scheduler, and the added latency grows with it.`,
    "",
    "| machine | |",
    "|---|---|",
    ...machine,
    "",
  ].join("\n");
}
