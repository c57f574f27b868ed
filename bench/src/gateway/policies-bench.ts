import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { compareLatency, createLogger, createPool } from "@switchboard/kit";
import { createRealTestDatabase } from "@switchboard/kit/testing";
import { startBenchApps, type Variant } from "./bench-apps.js";
import { measureFloors, type Floors } from "./bench-floors.js";
import { renderMarkdown, type PoliciesReport, type ScenarioResult } from "./bench-stats.js";
import { startClientThread } from "./client-thread.js";

/**
 * `npm run bench:policies`: the latency the rate limit and the Idempotency-Key store add to an
 * authenticated request, against the same request with the policies off, in one run.
 */
const { values: args } = parseArgs({
  options: {
    iterations: { type: "string", default: "3000" },
    warmup: { type: "string", default: "300" },
    // Idle time before each request: measures one request's latency, not a saturated loop in
    // which one request's background writes land on the next one's clock.
    "gap-ms": { type: "string", default: "1" },
    out: { type: "string", default: "bench/results" },
    redis: { type: "string", default: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379" },
  },
});

interface Scenario {
  name: string;
  /** Touches the Idempotency-Key store (measured with both commit modes). */
  idempotency: boolean;
  description: string;
  request: (iteration: number) => { method: string; path: string; key?: string; body?: string };
}

const scenarios: Scenario[] = [
  {
    name: "POST with a new Idempotency-Key",
    idempotency: true,
    description:
      "both policies: one token taken from the (account, numbers:write) bucket (Redis) while the key is claimed (INSERT … ON CONFLICT DO NOTHING; the two round trips go out together), before the operation; the response is stored (UPDATE) after the reply has gone out.",
    request: (i) => ({
      method: "POST",
      path: "/v1/bench/things",
      key: `bench-${process.pid}-${i}`,
      body: `{"value":"v${i}"}`,
    }),
  },
  {
    name: "POST replaying a key",
    idempotency: true,
    description:
      "both policies: a token taken while the stored response is read (one statement, sent together with the bucket script), then replayed.",
    request: () => ({
      method: "POST",
      path: "/v1/bench/things",
      key: `bench-${process.pid}-replay`,
      body: '{"value":"same"}',
    }),
  },
  {
    name: "GET",
    idempotency: false,
    description: "rate limit only (safe methods skip the Idempotency-Key store).",
    request: () => ({ method: "GET", path: "/v1/bench/things" }),
  },
];

async function main() {
  const iterations = Number(args.iterations);
  const warmup = Number(args.warmup);
  const gapMs = Number(args["gap-ms"]);
  const logger = createLogger("bench", { level: "warn" });
  const database = await createRealTestDatabase("bench_policies");
  const pool = createPool(database.url, { max: 10, name: "gateway" });
  const apps = await startBenchApps({
    pool,
    databaseUrl: database.url,
    redisUrl: args.redis,
    logger,
  });
  const results: ScenarioResult[] = [];
  const client = startClientThread();

  /**
   * One comparison: the same request to `off` and to `mode`, alternating which goes first. The
   * stored-response write that follows a reply is waited for between requests (off the clock),
   * so each sample is one request's own latency.
   */
  const measure = async (scenario: Scenario, mode: "on" | "onAsync"): Promise<ScenarioResult> => {
    const samples: Record<"off" | "on", number[]> = { off: [], on: [] };
    for (let i = 0; i < warmup + iterations; i += 1) {
      const { method, path: route, key, body } = scenario.request(i);
      const headers: Record<string, string> = {
        Authorization: `Bearer ${apps.token}`,
        ...(key ? { "Idempotency-Key": `${key}-${mode}` } : {}),
        ...(body ? { "Content-Type": "application/json" } : {}),
      };
      for (const side of i % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const)) {
        const variant: Variant = side === "off" ? "off" : mode;
        if (gapMs > 0) await sleep(gapMs);
        const { status, ms } = await client.request({
          url: `${apps.urls[variant]}${route}`,
          method,
          headers,
          body,
        });
        if (status >= 300) throw new Error(`${scenario.name} (${variant}) answered ${status}`);
        if (i >= warmup) samples[side].push(ms);
        await apps.settled[variant]();
      }
    }
    const commit =
      mode === "on"
        ? "claims wait for their flush"
        : "claims flushed by the operation, the default";
    const name = scenario.idempotency ? `${scenario.name} (${commit})` : scenario.name;
    return compareLatency(name, scenario.description, samples.off, samples.on);
  };
  let floors: Floors | undefined;
  try {
    for (const scenario of scenarios) {
      const modes = scenario.idempotency ? (["on", "onAsync"] as const) : (["on"] as const);
      for (const mode of modes) {
        results.push(await measure(scenario, mode));
        const last = results.at(-1)!;
        console.log(
          `${last.name.padEnd(58)} added p50 ${last.added.p50.toFixed(3)} ms  p99 ${last.added.p99.toFixed(3)} ms  (off p50 ${last.off.p50.toFixed(3)}, on p50 ${last.on.p50.toFixed(3)})`,
        );
      }
    }
  } finally {
    await client.close();
    const versions = await pool
      .query<{ version: string }>("SELECT version()")
      .catch(() => ({ rows: [] }));
    floors = await measureFloors({
      pool,
      databaseUrl: database.url,
      redisUrl: args.redis,
      gapMs,
    }).catch(() => undefined);
    machine.redis = await redisVersion(args.redis);
    await apps.close();
    await pool.end();
    await database.drop();
    machine.postgres = versions.rows[0]?.version.split(" on ")[0] ?? "unknown";
    machine.load_average_1m_at_end = os.loadavg()[0]!.toFixed(2);
  }

  const goal = (result: ScenarioResult) => result.added.p50 < 1 && result.added.p99 < 3;
  const report: PoliciesReport = {
    generated_at: new Date().toISOString(),
    command: "npm run bench:policies",
    iterations,
    warmup,
    gap_ms: gapMs,
    goals: results
      .filter((r) => r.name.startsWith("POST with a new Idempotency-Key"))
      .map((r) => ({ scenario: r.name, added_p50_ms: 1, added_p99_ms: 3, met: goal(r) })),
    ...(floors ? { floors_ms: floors } : {}),
    machine,
    scenarios: results,
  };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(path.join(args.out, "policies.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(args.out, "policies.md"), renderMarkdown(report));
  for (const g of report.goals)
    console.log(`goal (added p50 < 1 ms, p99 < 3 ms), ${g.scenario}: ${g.met ? "met" : "NOT met"}`);
}

async function redisVersion(url: string): Promise<string> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    return /redis_version:(\S+)/.exec(await redis.info("server"))?.[1] ?? "unknown";
  } catch {
    return "unreachable";
  } finally {
    redis.disconnect();
  }
}

const machine: Record<string, string | number> = {
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: os.cpus().length,
  memory_gb: Math.round(os.totalmem() / 2 ** 30),
  os: `${os.type()} ${os.release()}`,
  node: process.version,
  load_average_1m_at_start: os.loadavg()[0]!.toFixed(2),
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
