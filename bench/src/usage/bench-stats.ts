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
  /** Records per commit of the gateway's record outbox (its group commit). */
  records_per_commit: number;
}

/** What one record's commit cannot beat, measured in the same run. */
export interface Floor {
  postgres_round_trip: LatencyStats;
  record_commit: LatencyStats;
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
    `Generated ${r.generated_at} by \`${r.command}\` on real PostgreSQL (and Redis for the gateways' rate limits), one run.`,
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
    "The usage service is started, then handed the records as the gateways' record relays hand them over — `UsageService.AppendRequestRecords` batches of the size in the table, four at once — and timed until every record is signed (Ed25519, detached JWS over RFC 8785 JSON) and committed. One process: group-committed multi-row INSERTs, canonical JSON in the main thread and Ed25519 signatures on worker threads.",
    "",
    "| records per hand-off | records | seconds | records/s |",
    "|---|---|---|---|",
    ...r.ingest.map(
      (i) =>
        `| ${i.records_per_job} | ${int(i.records)} | ${i.seconds.toFixed(2)} | **${int(i.records_per_second)}** |`,
    ),
    "",
    `Signing alone (canonical JSON + Ed25519): ${int(r.signing_only_per_second.inline)} records/s in the main thread; ${int(r.signing_only_per_second.threaded)} records/s with the signatures on ${r.signing_only_per_second.threads} worker thread(s), as the service runs.`,
    "",
    `A hand-off carries what the gateway's relay holds when it sends: the records of the commits made since its last hand-off, so at least one commit's. A commit carries what the gateway's group commit gathers: one record when requests come one at a time; under load, the replies that end while a commit is being written share the next one. Observed: ${r.load.clients} concurrent clients for ${r.load.seconds} s → ${int(r.load.requests_per_second)} requests/s through one gateway, **${r.load.records_per_commit.toFixed(2)} records per commit**.`,
    "",
    "## Latency the record path adds to a request",
    "",
    "The same request against two gateways on the same database, Redis and usage service: **off** = `USAGE_RECORDS=false`; **on** = the record path (gateway/src/records/: the reply waits until its record is committed to the gateway's record outbox, `gateway.request_records`; the relay hands it to the usage service after the reply, in batches). One request at a time over a kept-alive loopback connection, the variants interleaved request by request. Times in ms.",
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
    `The record path's cost while the reply waits is one PostgreSQL commit of its record (shared with the replies ending meanwhile). Measured in the same run, one at a time: a PostgreSQL round trip (\`SELECT 1\`) p50 ${ms(r.floor.postgres_round_trip.p50)} / p99 ${ms(r.floor.postgres_round_trip.p99)} ms; one record inserted and committed on its own p50 ${ms(r.floor.record_commit.p50)} / p99 ${ms(r.floor.record_commit.p99)} ms. The usage service ran as its own process (its mesh entrypoint); the gateways and the measuring client share one process. On a machine whose cores are contended (see the load average below) every round trip waits for the scheduler, and the added latency grows with it.`,
    "",
    "| machine | |",
    "|---|---|",
    ...machine,
    "",
  ].join("\n");
}
