#!/usr/bin/env node
/**
 * `npm run bench:floor`: the gateway's floor on this machine. The cheapest write the public API
 * has (`POST /v1/api/agents`: one row, no event) and the cheapest read (`GET /v1/api/agents`),
 * through every policy the gateway applies to all traffic — a verified access token, the Redis
 * token bucket, the Idempotency-Key store with a new key per POST, the gRPC hop and the signed
 * request record — in both topologies: every component in one process (as the call and message
 * benchmarks run) and the mesh (each component its own process, as deployed, telemetry preload
 * on). Every other write of the API does this and more, so no write can go faster than this on
 * the same machine. Results: bench/results/floor.{json,md}.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import os from "node:os";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { machineBusyMs, threadCpuMs } from "./dist/cpu-time.js";

const warmupMs = Number(process.env.BENCH_WARMUP_SECONDS ?? 3) * 1000;
const measureMs = Number(process.env.BENCH_SECONDS ?? 8) * 1000;
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const scenarios = [
  { name: "POST /v1/api/agents", method: "POST", path: "/v1/api/agents", concurrency: 16 },
  { name: "POST /v1/api/agents", method: "POST", path: "/v1/api/agents", concurrency: 32 },
  ...[16, 32].map((concurrency) => ({
    name: "GET /v1/api/agents?limit=1",
    method: "GET",
    path: "/v1/api/agents?limit=1",
    concurrency,
  })),
];

/** The load generator's thread: a closed loop of kept-alive connections. */
async function runLoad({ url, method, token, concurrency }) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = new Map();
  const measureFrom = performance.now() + warmupMs;
  const stopAt = measureFrom + measureMs;
  let sequence = 0;
  const send = () =>
    new Promise((resolve, reject) => {
      sequence += 1;
      const headers = { Authorization: `Bearer ${token}` };
      let body;
      if (method === "POST") {
        headers["Content-Type"] = "application/json";
        headers["Idempotency-Key"] = `floor-${sequence}-${randomBytes(6).toString("hex")}`;
        body = JSON.stringify({ name: `floor-${sequence}-${randomBytes(4).toString("hex")}` });
      }
      const started = process.hrtime.bigint();
      const req = request(url, { method, headers, agent }, (res) => {
        res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }),
        );
      });
      req.on("error", reject);
      req.end(body);
    });
  let atMeasureStart;
  setTimeout(() => {
    atMeasureStart = { machine: machineBusyMs(), generator: threadCpuMs() };
  }, warmupMs);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const sentAt = performance.now();
        if (sentAt >= stopAt) return;
        const { status, ms } = await send();
        if (sentAt < measureFrom) continue;
        const list = latencies.get(status) ?? [];
        list.push(ms);
        latencies.set(status, list);
      }
    }),
  );
  // The machine's CPU in the measured window (server, PostgreSQL, Redis) less this thread's own.
  const servedMs =
    machineBusyMs() - atMeasureStart.machine - (threadCpuMs() - atMeasureStart.generator);
  agent.destroy();
  return {
    seconds: (performance.now() - measureFrom) / 1000,
    latencies: [...latencies],
    servedCpuMs: servedMs,
  };
}

if (!isMainThread) {
  parentPort.postMessage(await runLoad(workerData));
} else {
  await main();
  process.exit(0);
}

function load(data) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: data });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

async function main() {
  const { createLogger, summarizeLatency } = await import("@switchboard/kit");
  const { createRealTestDatabase } = await import("@switchboard/kit/testing");
  const { startPlatform } = await import("@switchboard/platform");
  const { freeMeshPorts, startMesh } = await import("@switchboard/platform/mesh");
  const secret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const credentials = {
    PUBLIC_URL: "http://switchboard.bench",
    BOOTSTRAP_ACCOUNT: "acct_bench",
    BOOTSTRAP_CLIENT_ID: "cli_bench",
    BOOTSTRAP_CLIENT_SECRET: secret,
    RATE_LIMITS: "*=1000000/1000000",
  };
  const topologies = {
    "one process": async (databaseUrl) => {
      const platform = await startPlatform({
        databaseUrl,
        redisUrl,
        busPrefix: `floor-${randomBytes(4).toString("hex")}`,
        logger: createLogger("bench", { level: "warn" }),
        gatewayEnv: {
          ...process.env,
          ...credentials,
          NODE_ENV: "development",
          LOG_LEVEL: "warn",
          PORT: "0",
          HOST: "127.0.0.1",
          REDIS_URL: redisUrl,
          REDIS_KEY_PREFIX: `floor:${randomBytes(4).toString("hex")}:`,
        },
      });
      return { url: platform.gateway.url, stop: () => platform.stop() };
    },
    mesh: (databaseUrl) => startMeshOn(databaseUrl, {}),
    "mesh (telemetry off)": (databaseUrl) =>
      startMeshOn(databaseUrl, { OTEL_SDK_DISABLED: "true" }),
  };

  async function startMeshOn(databaseUrl, extraEnv) {
    const prefix = `floor_${randomBytes(4).toString("hex")}`;
    const loopback = Object.fromEntries(
      ["HOST", "ADMIN_HOST", "INVENTORY_GRPC_HOST", "CALL_CONTROL_GRPC_HOST"]
        .concat(["MESSAGING_GRPC_HOST", "USAGE_GRPC_HOST", "WEBHOOK_GRPC_HOST"])
        .map((name) => [name, "127.0.0.1"]),
    );
    const mesh = await startMesh({
      databaseUrl,
      redisUrl,
      queuePrefix: prefix,
      ports: await freeMeshPorts(),
      env: {
        ...process.env,
        ...credentials,
        ...loopback,
        NODE_ENV: "development",
        LOG_LEVEL: "warn",
        REDIS_KEY_PREFIX: `${prefix}:rl:`,
        ...extraEnv,
      },
      output: () => undefined,
      notice: () => undefined,
    });
    return { url: mesh.url, stop: () => mesh.stop() };
  }

  const results = [];
  // BENCH_TOPOLOGIES=mesh (comma-separated names) runs only those; BENCH_SCENARIOS="POST 16"
  // (comma-separated: a method and connections each) only those rows.
  const only = process.env.BENCH_TOPOLOGIES?.split(",").map((name) => name.trim());
  const rows = process.env.BENCH_SCENARIOS?.split(",").map((row) => row.trim());
  const wanted = (scenario) => !rows || rows.includes(`${scenario.method} ${scenario.concurrency}`);
  for (const [topology, start] of Object.entries(topologies)) {
    if (only && !only.includes(topology)) continue;
    const database = await createRealTestDatabase("bench_floor");
    const platform = await start(database.url);
    try {
      const token = await accessToken(platform.url, secret);
      for (const scenario of scenarios.filter(wanted)) {
        const run = await load({
          url: `${platform.url}${scenario.path}`,
          method: scenario.method,
          token,
          concurrency: scenario.concurrency,
        });
        const all = run.latencies.flatMap(([, list]) => list);
        const ok = run.latencies.filter(([status]) => status < 300).flatMap(([, l]) => l);
        const row = {
          topology,
          scenario: scenario.name,
          concurrency: scenario.concurrency,
          per_second: Math.round(ok.length / run.seconds),
          cpu_ms_per_request: Math.round((run.servedCpuMs / Math.max(1, all.length)) * 1000) / 1000,
          statuses: Object.fromEntries(run.latencies.map(([s, l]) => [String(s), l.length])),
          latency_ms: summarizeLatency(all),
        };
        results.push(row);
        console.log(
          `${topology} · ${row.scenario} · ${row.concurrency} connections: ${row.per_second}/s, p50 ${row.latency_ms.p50} ms, p99 ${row.latency_ms.p99} ms, ${row.cpu_ms_per_request} cpu-ms/req`,
        );
      }
    } finally {
      await platform.stop();
      await database.drop();
    }
  }
  const report = {
    generated_at: new Date().toISOString(),
    command: "npm run bench:floor",
    warmup_seconds: warmupMs / 1000,
    measured_seconds: measureMs / 1000,
    results,
    machine: {
      cpu: os.cpus()[0]?.model.trim() ?? "unknown",
      cores: os.cpus().length,
      memory_gb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      load_average_at_end: os.loadavg().map((v) => Math.round(v * 100) / 100),
    },
  };
  await writeFile(
    new URL("./results/floor.json", import.meta.url),
    `${JSON.stringify(report, null, 2)}\n`,
  );
  await writeFile(new URL("./results/floor.md", import.meta.url), markdown(report));
  console.log(markdown(report));
}

async function accessToken(url, secret) {
  const response = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${Buffer.from(`cli_bench:${secret}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  return (await response.json()).access_token;
}

function markdown(r) {
  const rows = r.results.map(
    (x) =>
      `| ${x.topology} | ${x.scenario} | ${x.concurrency} | **${x.per_second}** | ${x.cpu_ms_per_request} | ${x.latency_ms.p50} / ${x.latency_ms.p90} / ${x.latency_ms.p99} | ${JSON.stringify(x.statuses)} |`,
  );
  const posts = r.results.filter((x) => x.scenario.startsWith("POST"));
  const best = (posts.length ? posts : r.results).reduce((a, b) =>
    b.per_second > a.per_second ? b : a,
  );
  return `# The gateway's floor: the cheapest write and read through every policy

Generated ${r.generated_at} by \`${r.command}\`: a closed loop of kept-alive connections from a load generator on its own thread, ${r.warmup_seconds} s warm-up, then ${r.measured_seconds} s measured, per row, on a fresh real PostgreSQL database and real Redis.

\`POST /v1/api/agents\` is the cheapest write of the API: one row in call-control, no event, no other service. It still takes every step the gateway applies to all traffic: the access token verified, one token from the Redis bucket of (account, calls:write), a new Idempotency-Key claimed before and its response stored after (PostgreSQL), the gRPC call, and the request's usage record (committed with the stored answer in the gateway's record outbox before the reply, relayed in batches to the usage service, which signs and appends it). \`GET /v1/api/agents?limit=1\` is the read: no Idempotency-Key store. "One process" is every component on one event loop (as the call and message benchmarks run); "mesh" is each component its own process, as deployed (the OpenTelemetry preload on, no exporter: trace ids and context propagation, nothing recorded); "mesh (telemetry off)" is the same with \`OTEL_SDK_DISABLED=true\`, which shows what the preload costs. cpu-ms per request is the machine's CPU time in the measured window (every process: the platform, PostgreSQL, Redis) less the load generator thread's own, per request — measured as the monolith anchor (\`bench/monolith-anchor\`) measures it.

| topology | request | connections | per second (2xx) | cpu-ms per request | p50 / p90 / p99 ms | statuses |
|---|---|---:|---:|---:|---|---|
${rows.join("\n")}

Every other write of the API takes these same steps and then does more, so on this machine none can be accepted faster than the best POST row: **${best.per_second}/s** (${best.topology}, ${best.concurrency} connections, p99 ${best.latency_ms.p99} ms). Placing a call adds an inventory lookup over gRPC, the seat's claim, an ES256 PASSporT and an event, and a message adds the template's signature, the consent and an event; both then start background work (dialling, receipts) on the same cores.

| machine | |
|---|---|
| cpu | ${r.machine.cpu} |
| cores | ${r.machine.cores} |
| memory | ${r.machine.memory_gb} GB |
| node | ${r.machine.node} |
| load average at end | ${r.machine.load_average_at_end.join(", ")} |
`;
}
