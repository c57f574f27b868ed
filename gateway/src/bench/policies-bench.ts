import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { createLogger, createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase } from "@switchboard/kit/testing";
import { startBenchApps, type Variant } from "./bench-apps.js";
import { compare, renderMarkdown, summarize, type PoliciesReport, type ScenarioResult } from "./bench-stats.js";
import { closeClient, timedRequest } from "./http-client.js";

/**
 * `npm run bench:policies`: the latency the rate limit and the Idempotency-Key store add to an
 * authenticated request, against the same request with the policies off, in one run.
 */
const { values: args } = parseArgs({
  options: {
    iterations: { type: "string", default: "3000" },
    warmup: { type: "string", default: "300" },
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
      "both policies: one token taken from the (account, numbers:write) bucket, the key claimed (INSERT … ON CONFLICT) and the response stored (UPDATE).",
    request: (i) => ({ method: "POST", path: "/v1/bench/things", key: `bench-${process.pid}-${i}`, body: `{"value":"v${i}"}` }),
  },
  {
    name: "POST replaying a key",
    idempotency: true,
    description: "both policies: a token taken, then the stored response replayed (one statement).",
    request: () => ({ method: "POST", path: "/v1/bench/things", key: `bench-${process.pid}-replay`, body: '{"value":"same"}' }),
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
  const logger = createLogger("bench", { level: "warn" });
  const database = await createRealTestDatabase("bench_policies");
  const pool = createPool(database.url, { max: 10, name: "gateway" });
  const apps = await startBenchApps({ pool, databaseUrl: database.url, redisUrl: args.redis, logger });
  const results: ScenarioResult[] = [];
  let commitCost: { p50: number; p99: number } | undefined;
  const variants: Variant[] = ["off", "on", "onAsync"];
  try {
    for (const scenario of scenarios) {
      const samples: Record<Variant, number[]> = { off: [], on: [], onAsync: [] };
      for (let i = 0; i < warmup + iterations; i += 1) {
        const { method, path: route, key, body } = scenario.request(i);
        const headers: Record<string, string> = {
          Authorization: `Bearer ${apps.token}`,
          ...(key ? { "Idempotency-Key": key } : {}),
          ...(body ? { "Content-Type": "application/json" } : {}),
        };
        // Rotate which variant goes first, so none always meets the warmer caches.
        for (let v = 0; v < variants.length; v += 1) {
          const variant = variants[(i + v) % variants.length]!;
          const { status, ms } = await timedRequest(`${apps.urls[variant]}${route}`, { method, headers, body });
          if (status >= 300) throw new Error(`${scenario.name} (${variant}) answered ${status}`);
          if (i >= warmup) samples[variant].push(ms);
        }
      }
      for (const [variant, commit] of [["on", "synchronous commit"], ["onAsync", "synchronous_commit=off"]] as const) {
        const name = scenario.idempotency ? `${scenario.name} (${commit})` : scenario.name;
        const result = compare(name, scenario.description, samples.off, samples[variant]);
        if (!scenario.idempotency && variant === "onAsync") break;
        results.push(result);
        console.log(
          `${name.padEnd(58)} added p50 ${result.added.p50.toFixed(3)} ms  p99 ${result.added.p99.toFixed(3)} ms  (off p50 ${result.off.p50.toFixed(3)}, on p50 ${result.on.p50.toFixed(3)})`,
        );
      }
    }
  } finally {
    closeClient();
    const versions = await pool.query<{ version: string }>("SELECT version()").catch(() => ({ rows: [] }));
    commitCost = await durableCommitCost(pool).catch(() => undefined);
    machine.redis = await redisVersion(args.redis);
    await apps.close();
    await pool.end();
    await database.drop();
    machine.postgres = versions.rows[0]?.version.split(" on ")[0] ?? "unknown";
  }

  const goal = (result: ScenarioResult) => result.added.p50 < 1 && result.added.p99 < 3;
  const report: PoliciesReport = {
    generated_at: new Date().toISOString(),
    command: "npm run bench:policies",
    iterations,
    warmup,
    goals: results
      .filter((r) => r.name.startsWith("POST with a new Idempotency-Key"))
      .map((r) => ({ scenario: r.name, added_p50_ms: 1, added_p99_ms: 3, met: goal(r) })),
    ...(commitCost ? { durable_commit_ms: commitCost } : {}),
    machine,
    scenarios: results,
  };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(path.join(args.out, "policies.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(args.out, "policies.md"), renderMarkdown(report));
  for (const g of report.goals) console.log(`goal (added p50 < 1 ms, p99 < 3 ms), ${g.scenario}: ${g.met ? "met" : "NOT met"}`);
}

/** What one synchronously committed one-row INSERT costs here: the floor of a durable claim. */
async function durableCommitCost(pool: Pool): Promise<{ p50: number; p99: number }> {
  await pool.query("CREATE TABLE public.commit_probe (id int PRIMARY KEY)");
  const samples: number[] = [];
  for (let i = 0; i < 500; i += 1) {
    const started = performance.now();
    await pool.query("INSERT INTO public.commit_probe VALUES ($1)", [i]);
    samples.push(performance.now() - started);
  }
  const { p50, p99 } = summarize(samples);
  return { p50, p99 };
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
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
