import { randomBytes } from "node:crypto";
import { compareLatency, createPool, summarizeLatency, type Logger } from "@switchboard/kit";
import { createRealTestDatabase } from "@switchboard/kit/testing";
import { loadGatewayConfig, startGateway, type RunningGateway } from "@switchboard/gateway";
import { freePort, startUsageProcess } from "./usage-process.js";
import { type Floor, type LatencyResult, type LoadResult } from "./bench-stats.js";
import { timedRequest } from "./http-timing.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(ready: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready().catch(() => false))) {
    if (Date.now() > deadline) throw new Error("the usage service did not become ready");
    await sleep(100);
  }
}

interface Scenario {
  name: string;
  description: string;
  path: string;
  authenticated: boolean;
  /** Whether the usage service consumes the records meanwhile (on the same cores). */
  consuming: boolean;
}

const scenarios: Scenario[] = [
  {
    name: "GET /v1/errors/not-found, records not being consumed",
    description:
      "a public route that touches no backend, the usage service not yet started: the records wait in the gateway's record outbox (gateway.request_records), so this is the reply's commit alone.",
    path: "/v1/errors/not-found",
    authenticated: false,
    consuming: false,
  },
  {
    name: "GET /v1/errors/not-found",
    description:
      "the same, with the usage service consuming each record as it arrives — in its own process, but on the same two (shared) cores.",
    path: "/v1/errors/not-found",
    authenticated: false,
    consuming: true,
  },
  {
    name: "GET /v1/api/usage/events?limit=1",
    description:
      "an authenticated route through a backend (token check, rate limit, one gRPC call to the usage service).",
    path: "/v1/api/usage/events?limit=1",
    authenticated: true,
    consuming: true,
  },
];

/**
 * Two gateways on one database and one usage service: records off and on. The record path as
 * it is (gateway/src/records/): the reply's record committed to the gateway's record outbox
 * (ReplyCommitter, group commit) before the reply goes out, then relayed in batches to the
 * usage service (RecordRelay → UsageService.AppendRequestRecords), which signs and appends it.
 * Measures the latency added per scenario, then drives the "on" gateway with concurrent clients
 * to see how many records its group commit puts in one commit.
 */
export async function recordPathLatency(options: {
  redisUrl: string;
  logger: Logger;
  iterations: number;
  warmup: number;
  loadClients: number;
  loadSeconds: number;
}): Promise<{ latency: LatencyResult[]; load: LoadResult; floor: Floor }> {
  const { logger } = options;
  const database = await createRealTestDatabase("bench_usage_path");
  const pool = createPool(database.url, { max: 2, name: "usage-bench-observer" });
  const prefix = `sbbench_${randomBytes(4).toString("hex")}`;
  // The usage service runs in its own process, as in the mesh. It starts after the first
  // scenario: until then the gateway's relay cannot hand its records over, and they wait.
  const usagePort = await freePort();
  let usage: { stop(): Promise<void> } | undefined;
  const clientSecret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const env = {
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: database.url,
    REDIS_URL: options.redisUrl,
    REDIS_KEY_PREFIX: `${prefix}:`,
    USAGE_ADDR: `127.0.0.1:${usagePort}`,
    RATE_LIMITS: "*=1000000/1000000",
    BOOTSTRAP_ACCOUNT: "acct_bench",
    BOOTSTRAP_CLIENT_ID: "cli_bench",
    BOOTSTRAP_CLIENT_SECRET: clientSecret,
  };
  const outboxRows = async () =>
    (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM gateway.request_records"))
      .rows[0]!.n;
  const gateways: Record<"off" | "on", RunningGateway> = {
    off: await startGateway({
      config: loadGatewayConfig({ ...env, USAGE_RECORDS: "false" }),
      logger,
    }),
    on: await startGateway({ config: loadGatewayConfig(env), logger }),
  };
  try {
    const tokenResponse = await fetch(`${gateways.on.url}/oauth/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${Buffer.from(`cli_bench:${clientSecret}`).toString("base64")}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });
    const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
    const latency: LatencyResult[] = [];
    const variants = ["off", "on"] as const;
    for (const scenario of scenarios) {
      if (scenario.consuming && !usage) {
        usage = await startUsageProcess({
          databaseUrl: database.url,
          redisUrl: options.redisUrl,
          prefix,
          port: usagePort,
        });
        await waitUntil(async () => {
          const probe = await timedRequest(`${gateways.on.url}/v1/api/usage/events?limit=1`, {
            Authorization: `Bearer ${token}`,
          });
          return probe.status === 200;
        });
        // Let the relay hand over what the first scenario left in the outbox before measuring
        // again (its poll backs off while the usage service is away: up to 30 s).
        await waitUntil(async () => (await outboxRows()) === 0, 120_000);
      }
      const headers: Record<string, string> = scenario.authenticated
        ? { Authorization: `Bearer ${token}` }
        : {};
      const samples = { off: [] as number[], on: [] as number[] };
      for (let i = 0; i < options.warmup + options.iterations; i += 1) {
        for (let v = 0; v < variants.length; v += 1) {
          const variant = variants[(i + v) % variants.length]!;
          const { status, ms } = await timedRequest(
            `${gateways[variant].url}${scenario.path}`,
            headers,
          );
          if (status !== 200) throw new Error(`${scenario.name} (${variant}) answered ${status}`);
          if (i >= options.warmup) samples[variant].push(ms);
        }
      }
      const result = compareLatency(scenario.name, scenario.description, samples.off, samples.on);
      latency.push(result);
      console.log(
        `${scenario.name.padEnd(36)} added p50 ${result.added.p50.toFixed(3)} ms  p99 ${result.added.p99.toFixed(3)} ms  (off p50 ${result.off.p50.toFixed(3)}, on p50 ${result.on.p50.toFixed(3)})`,
      );
    }

    // The floor, measured now: one PostgreSQL round trip, and one record's commit on its own
    // (a one-row insert into a copy of the outbox, committed with the server's default
    // synchronous_commit: what a reply waits for when no other reply shares its commit).
    const pings: number[] = [];
    const commits: number[] = [];
    await pool.query(
      "CREATE TABLE bench_record_floor (LIKE gateway.request_records INCLUDING DEFAULTS)",
    );
    const record = { bench: true, route: "/v1/errors/not-found", status: 200 };
    for (let i = 0; i < 1_000; i += 1) {
      let started = process.hrtime.bigint();
      await pool.query("SELECT 1");
      pings.push(Number(process.hrtime.bigint() - started) / 1e6);
      started = process.hrtime.bigint();
      await pool.query(
        "INSERT INTO bench_record_floor (request_id, record) VALUES ($1, $2::jsonb)",
        [`req_floor_${i}`, JSON.stringify(record)],
      );
      commits.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const floor = {
      postgres_round_trip: summarizeLatency(pings),
      record_commit: summarizeLatency(commits),
    };
    console.log(
      `floor: PostgreSQL SELECT 1 p50 ${floor.postgres_round_trip.p50} ms, one record committed p50 ${floor.record_commit.p50} ms`,
    );

    // Concurrent clients against the "on" gateway: how large do its batches grow?
    const before = gateways.on.records.stats();
    let requests = 0;
    let running = true;
    const started = Date.now();
    const client = async () => {
      while (running) {
        const { status } = await timedRequest(`${gateways.on.url}/v1/errors/not-found`);
        if (status !== 200) throw new Error(`load request answered ${status}`);
        requests += 1;
      }
    };
    const clients = Array.from({ length: options.loadClients }, client);
    await sleep(options.loadSeconds * 1000);
    running = false;
    await Promise.all(clients);
    const seconds = (Date.now() - started) / 1000;
    const after = gateways.on.records.stats();
    const load: LoadResult = {
      clients: options.loadClients,
      seconds: Math.round(seconds * 10) / 10,
      requests,
      requests_per_second: requests / seconds,
      records_per_commit:
        (after.records - before.records) / Math.max(1, after.batches - before.batches),
    };
    console.log(
      `load: ${load.clients} clients, ${Math.round(load.requests_per_second)} req/s, ${load.records_per_commit.toFixed(2)} records per commit`,
    );
    return { latency, load, floor };
  } finally {
    await gateways.on.stop();
    await gateways.off.stop();
    await usage?.stop();
    await pool.end();
    await database.drop();
  }
}
