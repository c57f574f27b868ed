import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import {
  createLogger,
  createPool,
  eventQueueNames,
  platformConsumerGroups,
  summarizeLatency,
  usageRecordQueue,
  type EventBus,
  type Logger,
  type Pool,
} from "@switchboard/kit";
import { createRealTestDatabase } from "@switchboard/kit/testing";
import { seedInventory } from "@switchboard/inventory";
import type { RunningCallControl } from "@switchboard/call-control";
import { machineBusyMs } from "../cpu-time.js";
import { cpuShares, type CpuShare } from "./cpu-profile.js";
import { type LoadResult } from "./load.js";
import { countRoundTrips, roundTripsPerCall } from "./pg-round-trips.js";
import type { LoadWorkerInput } from "./load-worker.js";
import { renderReport, type CallsBenchReport, type CallsCarrierRun } from "./report.js";
import { bound, freeSipPort, runSipp, startSipp, type Sipp } from "./sipp.js";

/**
 * `npm run bench:calls`: POST /v1/api/calls/outbound through the gateway (authentication, the
 * Redis token bucket and the Idempotency-Key store on, a new key per request) with the whole
 * platform in process (startPlatform) and real Redis, the same load twice, one after the other,
 * each on a fresh real PostgreSQL database: once on the sandbox voice carrier, once on the sip
 * carrier. Every call is real — signed, stored, dialled, rung, answered and completed after
 * SANDBOX_CALL_SECONDS while the load runs, its events relayed to BullMQ: on the sandbox network
 * (durable timers in the platform), or on sip, where call-control rings the seat's phone (one
 * SIPp registered as every seat, answering) and then the trunk (a SIPp answering and hanging up
 * after SANDBOX_CALL_SECONDS), over UDP on loopback. The warm-up is a load of its own whose calls
 * end before the measured window opens; cpu-ms per call counts the machine from the window's
 * start until every call placed in it has ended (cpuPerCall), less the load generator's thread
 * and the SIPp processes (the network, as bench:messages leaves out its SMSC). One report,
 * bench/results/calls.{json,md}, the carriers side by side.
 */
const { values: args } = parseArgs({
  options: {
    concurrency: { type: "string", default: process.env.BENCH_CONCURRENCY ?? "16" },
    seconds: { type: "string", default: process.env.BENCH_SECONDS ?? "20" },
    warmup: { type: "string", default: process.env.BENCH_WARMUP_SECONDS ?? "5" },
    seats: { type: "string", default: "8" },
    /** The voice carriers to run, in order. */
    carriers: { type: "string", default: process.env.BENCH_CALL_CARRIERS ?? "sandbox,sip" },
    out: { type: "string", default: "bench/results" },
    /**
     * Writes a CPU profile of each measured window (node:inspector) to this file, the carrier's
     * name before its extension (calls.sandbox.cpuprofile, …).
     */
    profile: { type: "string" },
  },
});
const concurrency = Number(args.concurrency);
const seconds = Number(args.seconds);
const warmupSeconds = Number(args.warmup);
const seatCount = Number(args.seats);
const carriers = args.carriers
  .split(",")
  .map((c) => c.trim())
  .filter(Boolean) as Carrier[];
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const sandboxCallSeconds = process.env.SANDBOX_CALL_SECONDS ?? "2";
const host = "127.0.0.1";
const observerName = "bench-observer";
/** Every statement the platform sends to PostgreSQL (the benchmark's observer left out). */
const roundTrips = countRoundTrips([observerName]);

/** The platform package depends on this one: it is loaded at run time to keep the build graph acyclic. */
interface PlatformModule {
  startPlatform(options: {
    databaseUrl: string;
    redisUrl?: string;
    busPrefix?: string;
    logger: Logger;
    gatewayEnv: NodeJS.ProcessEnv;
    serviceEnv?: NodeJS.ProcessEnv;
    beforeGateway?: (pools: Record<string, Pool>) => Promise<void>;
  }): Promise<{
    gateway: { url: string };
    bus: EventBus;
    services: Record<string, { instance: unknown }>;
    stop(): Promise<void>;
  }>;
}
const platformPackage = "@switchboard/platform";

type Carrier = "sandbox" | "sip";

interface SeatCredentials {
  username: string;
  password: string;
}

/** The far side of a carrier: nothing for the sandbox (it is in the platform), SIPps for sip. */
interface Network {
  /** The services' and the gateway's settings for it. */
  env: Record<string, string>;
  /** Where the calls go, for the report. */
  where: string;
  /** Once the platform and the seats exist: e.g. the phone registers as every seat. */
  attach(sipPort: number | undefined, seats: SeatCredentials[]): Promise<void>;
  /** CPU time of its processes so far (left out of the machine's). */
  cpuMs(): number;
  /** Calls its processes counted successful and failed, once stopped (null where none count). */
  counts(): CallsCarrierRun["network_counts"];
  /** Stops its processes (again: nothing). */
  stop(): Promise<void>;
}

const networks: Record<Carrier, () => Promise<Network>> = {
  sandbox: async () => ({
    env: { VOICE_CARRIER: "sandbox" },
    where: "the sandbox carrier, in the platform process (its network is durable timers)",
    attach: async () => undefined,
    cpuMs: () => 0,
    counts: () => null,
    stop: async () => undefined,
  }),
  sip: async () => {
    const trunkPort = await freeSipPort();
    let phonePort = await freeSipPort();
    while (phonePort === trunkPort) phonePort = await freeSipPort();
    const many = 10_000_000;
    const trunk = startSipp({
      scenario: "trunk-answer-bye.xml",
      port: trunkPort,
      calls: many,
      fill: { hold: String(Number(sandboxCallSeconds) * 1000) },
    });
    await bound(trunk, trunkPort);
    const sipps: Sipp[] = [trunk];
    return {
      env: {
        VOICE_CARRIER: "sip",
        SIP_LISTEN: `${host}:0`,
        SIP_DOMAIN: host,
        SIP_DIGEST_ALGORITHMS: "MD5",
        SIP_TRUNK_URI: `sip:${host}:${trunkPort};transport=udp`,
      },
      where: `SIPp processes on loopback UDP: the trunk (port ${trunkPort}, answering, BYE after ${sandboxCallSeconds} s) and the seats' phone (port ${phonePort}, registered as every seat, answering); their CPU time left out`,
      attach: async (sipPort, seats) => {
        if (sipPort === undefined) throw new Error("call-control did not start its SIP endpoint");
        for (const seat of seats) {
          const registered = await runSipp({
            scenario: "phone-register.xml",
            target: { host, port: sipPort },
            port: phonePort,
            calls: 1,
            keys: { user: seat.username, domain: host },
            args: ["-au", seat.username, "-ap", seat.password],
          });
          if (registered.code !== 0)
            throw new Error(
              `the phone did not register as ${seat.username}:\n${registered.output}`,
            );
        }
        const phone = startSipp({ scenario: "phone-answer.xml", port: phonePort, calls: many });
        sipps.push(phone);
        await bound(phone, phonePort);
      },
      cpuMs: () =>
        sipps.reduce((sum, sipp) => {
          if (sipp.exited()) throw new Error(`a SIPp exited during the run:\n${sipp.output()}`);
          return sum + sipp.cpuMs();
        }, 0),
      counts: () => ({
        trunk: trunk.counts(),
        phone: sipps[1]?.counts() ?? { successful: null, failed: null },
      }),
      stop: async () => {
        await Promise.all(sipps.map((sipp) => sipp.stop()));
      },
    };
  },
};

async function main() {
  Object.assign(process.env, {
    SANDBOX_CALL_SECONDS: sandboxCallSeconds,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  });
  const runs: CallsCarrierRun[] = [];
  let postgres = "unknown";
  for (const carrier of carriers) {
    if (!(carrier in networks)) throw new Error(`unknown voice carrier ${carrier}`);
    const run = await runCarrier(carrier);
    postgres = run.postgres;
    runs.push(run.result);
  }
  const report: CallsBenchReport = {
    generated_at: new Date().toISOString(),
    command: "npm run bench:calls",
    concurrency,
    warmup_seconds: warmupSeconds,
    measured_seconds: seconds,
    sandbox_call_seconds: Number(sandboxCallSeconds),
    seats: seatCount,
    goal: { placed_per_second: 1000, p99_ms: 50 },
    carriers: runs,
    machine: machine(postgres),
  };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(path.join(args.out, "calls.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(args.out, "calls.md"), renderReport(report));
  console.log(renderReport(report));
}

/** One carrier's run: a fresh database and platform, the account set up, warm-up, window. */
async function runCarrier(
  carrier: Carrier,
): Promise<{ result: CallsCarrierRun; postgres: string }> {
  const { startPlatform } = (await import(platformPackage)) as PlatformModule;
  const network = await networks[carrier]();
  const database = await createRealTestDatabase("bench_calls");
  const logger = createLogger("bench", { level: "warn" });
  const secret = `sbcs_${randomBytes(24).toString("base64url")}`;
  let platform: Awaited<ReturnType<PlatformModule["startPlatform"]>> | undefined;
  let db: Pool | undefined;
  try {
    console.log(`bench:calls — ${carrier}: starting the platform`);
    platform = await startPlatform({
      databaseUrl: database.url,
      redisUrl,
      busPrefix: `bench-${randomBytes(4).toString("hex")}`,
      logger,
      serviceEnv: { ...process.env, ...network.env },
      gatewayEnv: {
        ...process.env,
        ...network.env,
        NODE_ENV: "development",
        PORT: "0",
        HOST: host,
        PUBLIC_URL: "http://switchboard.bench",
        BOOTSTRAP_ACCOUNT: "acct_bench",
        BOOTSTRAP_CLIENT_ID: "cli_bench",
        BOOTSTRAP_CLIENT_SECRET: secret,
        REDIS_URL: redisUrl,
        REDIS_KEY_PREFIX: `sbbench:${randomBytes(4).toString("hex")}:`,
        RATE_LIMITS: "*=1000000/1000000",
      },
      beforeGateway: async (pools) => {
        await seedInventory(pools.inventory!, { count: 2_000, seed: 9 });
      },
    });
    const running = platform;
    const base = running.gateway.url;
    const observer = createPool(database.url, { max: 2, name: observerName });
    db = observer;
    const token = await accessToken(base, secret);
    const auth = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const post = async (p: string, body: unknown) => {
      const response = await fetch(`${base}${p}`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify(body),
      });
      if (response.status >= 300)
        throw new Error(`${p}: ${response.status} ${await response.text()}`);
      return (await response.json()) as Record<string, unknown>;
    };
    await post("/v1/api/agents", { name: "bench" });
    const search = await fetch(`${base}/v1/api/numbers/search?country=US&limit=${seatCount}`, {
      headers: auth,
    });
    const numbers = ((await search.json()) as { data: { number: string }[] }).data.map(
      (n) => n.number,
    );
    const callers: string[] = [];
    const seats: SeatCredentials[] = [];
    for (const [i, number] of numbers.entries()) {
      const seat = await post("/v1/api/seats", {
        name: `bench ${i}`,
        max_concurrent_calls: 10_000,
      });
      seats.push(seat.sip as SeatCredentials);
      const hold = await post("/v1/api/numbers/hold", { number });
      await post(`/v1/api/numbers/holds/${String(hold.id)}/assign`, { seat_id: seat.id });
      callers.push(number);
    }
    const callControl = running.services["call-control"]?.instance as
      RunningCallControl | undefined;
    await network.attach(callControl?.sip?.endpoint.transport.port, seats);

    const load = (label: string, measureMs: number) =>
      runLoad({
        label,
        url: `${base}/v1/api/calls/outbound`,
        token,
        concurrency,
        warmupMs: 0,
        measureMs,
        callers,
        agent: "bench",
        to: "+15550100000",
      });
    // The warm-up's calls live and end before the measured window opens, so that the window's
    // CPU time is the measured calls' own.
    console.log(
      `bench:calls — ${carrier}: ${concurrency} connections, ${warmupSeconds} s warm-up…`,
    );
    await load("warm", warmupSeconds * 1000);
    if (!(await waitForEveryCallToEnd(observer, running.bus, 120_000)))
      throw new Error("the warm-up's calls did not end within 120 s");

    const profiler = args.profile ? await startProfiler() : undefined;
    console.log(`bench:calls — ${carrier}: ${seconds} s measured…`);
    const windowOpened = await databaseNow(observer);
    const start = cpuNow(network);
    const statementsAtStart = roundTrips.snapshot();
    const run = await load("run", seconds * 1000);
    const placing = cpuNow(network);
    let cpu: CpuShare[] | undefined;
    if (profiler && args.profile) {
      const profile = await profiler();
      const file = args.profile.replace(/(\.[^./]*)?$/, `.${carrier}$1`);
      writeFileSync(file, JSON.stringify(profile));
      cpu = cpuShares(profile as Parameters<typeof cpuShares>[0]);
    }
    const placed = run.latencies.get(201) ?? [];
    const all = [...run.latencies.values()].flat();
    const backlogAtEnd = await backlog(observer);
    const settled = await waitForEveryCallToEnd(observer, running.bus, 120_000);
    const end = cpuNow(network);
    const statements = roundTripsPerCall(statementsAtStart, roundTrips.snapshot(), placed.length);
    const ended = await outcomes(observer, windowOpened);
    // The SIPps print their final counts as they exit.
    await network.stop();
    const result: CallsCarrierRun = {
      carrier,
      network: network.where,
      measured_seconds: Math.round(run.seconds * 1000) / 1000,
      statuses: Object.fromEntries(
        [...run.latencies.entries()].map(([status, list]) => [String(status), list.length]),
      ),
      placed_per_second: Math.round((placed.length / run.seconds) * 10) / 10,
      latency_ms: summarizeLatency(all),
      latency_201_ms: summarizeLatency(placed),
      after_window: {
        ...backlogAtEnd,
        seconds_until_every_call_ended: settled
          ? Math.round((end.at - placing.at) / 100) / 10
          : null,
      },
      outcomes: ended,
      network_counts: network.counts(),
      cpu: cpuPerCall(placed.length, { start, placing, end }, run.generatorCpuMs),
      postgres_round_trips: statements,
      ...(cpu ? { cpu_during_window: cpu } : {}),
      load_average_at_end: loadAverage(),
    };
    console.log(
      `bench:calls — ${carrier}: ${result.placed_per_second} calls/s, p99 ${result.latency_ms.p99} ms, ${result.cpu.ms_per_call} cpu-ms per call, ${statements.per_call} PostgreSQL round trips per call; ${ended.not_completed} of ${ended.calls} not completed`,
    );
    const version = await observer.query<{ version: string }>("SELECT version()");
    return {
      result,
      postgres: version.rows[0]?.version.split(" on ")[0] ?? "unknown",
    };
  } finally {
    await db?.end();
    await platform?.stop();
    await database.drop();
    await network.stop();
  }
}

/** Runs the closed loop on a worker thread: its latencies by status and the thread's CPU time. */
function runLoad(input: LoadWorkerInput): Promise<LoadResult & { generatorCpuMs: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./load-worker.js", import.meta.url), { workerData: input });
    worker.once(
      "message",
      (message: { seconds: number; latencies: [number, number[]][]; generatorCpuMs: number }) =>
        resolve({ ...message, latencies: new Map(message.latencies) }),
    );
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`the load worker exited with ${code}`));
    });
  });
}

/** Starts the V8 CPU profiler; the returned function stops it. */
async function startProfiler(): Promise<() => Promise<unknown>> {
  const inspector = await import("node:inspector");
  const session = new inspector.Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post("Profiler.enable");
  await post("Profiler.start");
  return async () => {
    const { profile } = (await post("Profiler.stop")) as { profile: unknown };
    session.disconnect();
    return profile;
  };
}

async function accessToken(base: string, secret: string): Promise<string> {
  const response = await fetch(`${base}/oauth/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${Buffer.from(`cli_bench:${secret}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

async function backlog(db: Pool) {
  const { rows } = await db.query<{
    live: number;
    ended: number;
    timers_due: number;
    outbox_unpublished: number;
  }>(
    `SELECT
       (SELECT count(*)::int FROM call_control.calls WHERE ended_at IS NULL) AS live,
       (SELECT count(*)::int FROM call_control.calls WHERE ended_at IS NOT NULL) AS ended,
       (SELECT count(*)::int FROM call_control.scheduled_actions WHERE due_at <= now()) AS timers_due,
       (SELECT count(*)::int FROM call_control.outbox WHERE published_at IS NULL) AS outbox_unpublished`,
  );
  return rows[0]!;
}

/**
 * Polls until every call has ended, its events are relayed and the queues their consumers read
 * (usage, webhooks, and the gateway's request records) have nothing waiting or running.
 */
async function waitForEveryCallToEnd(db: Pool, bus: EventBus, timeoutMs: number) {
  const queues = [
    ...platformConsumerGroups.flatMap((g) => eventQueueNames(g.name)),
    usageRecordQueue,
  ];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { live, outbox_unpublished } = await backlog(db);
    const counts = await Promise.all(queues.map((queue) => bus.jobCounts(queue)));
    const queued = counts.reduce((sum, c) => sum + c.waiting + c.active, 0);
    if (live + outbox_unpublished + queued === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

/** The window's calls (created since `since`) by how they ended. */
async function outcomes(db: Pool, since: string): Promise<CallsCarrierRun["outcomes"]> {
  const { rows } = await db.query<{
    status: string;
    hangup_cause: string | null;
    hangup_source: string | null;
    n: number;
  }>(
    `SELECT status, hangup_cause, hangup_source, count(*)::int AS n
       FROM call_control.calls WHERE created_at >= $1
      GROUP BY 1, 2, 3 ORDER BY 4 DESC`,
    [since],
  );
  const dialogs = await db.query<{ open: number }>(
    `SELECT count(*)::int AS open FROM call_control.sip_dialogs WHERE state <> 'terminated'`,
  );
  const calls = rows.reduce((sum, row) => sum + row.n, 0);
  const completed = rows.filter((r) => r.status === "completed").reduce((sum, r) => sum + r.n, 0);
  return {
    calls,
    completed,
    not_completed: calls - completed,
    by_outcome: rows.map((r) => ({
      status: r.status,
      hangup_cause: r.hangup_cause,
      hangup_source: r.hangup_source,
      calls: r.n,
    })),
    sip_dialogs_open: dialogs.rows[0]?.open ?? 0,
  };
}

async function databaseNow(db: Pool): Promise<string> {
  const { rows } = await db.query<{ now: string }>("SELECT clock_timestamp()::text AS now");
  return rows[0]!.now;
}

interface CpuMark {
  at: number;
  machine: number;
  process: number;
  network: number;
}

/** Where the CPU time stands now: the machine's, this process's (the whole platform), the network's. */
function cpuNow(network: Network): CpuMark {
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    machine: machineBusyMs(),
    process: (usage.user + usage.system) / 1000,
    network: network.cpuMs(),
  };
}

/**
 * cpu-ms per call placed in the window, over the whole life of the calls: the machine's CPU time
 * (the platform, PostgreSQL, Redis) from the window's start until every call had ended, less the
 * load generator's thread and the network's processes (the SIPps) — as the messages benchmark
 * measures a message's whole life, its SMSC left out.
 */
function cpuPerCall(
  calls: number,
  marks: { start: CpuMark; placing: CpuMark; end: CpuMark },
  generatorCpuMs: number,
): CallsCarrierRun["cpu"] {
  const { start, placing, end } = marks;
  const perCall = (ms: number) => Math.round((ms / Math.max(1, calls)) * 1000) / 1000;
  const network = end.network - start.network;
  const served = end.machine - start.machine - generatorCpuMs - network;
  const platform = end.process - start.process - generatorCpuMs;
  return {
    window_ms: Math.round(end.at - start.at),
    ms_per_call: perCall(served),
    placing_ms_per_call: perCall(
      placing.machine - start.machine - generatorCpuMs - (placing.network - start.network),
    ),
    after_window_ms_per_call: perCall(
      end.machine - placing.machine - (end.network - placing.network),
    ),
    platform_process_ms_per_call: perCall(platform),
    rest_ms_per_call: perCall(served - platform),
    left_out: {
      load_generator_ms: Math.round(generatorCpuMs),
      network_ms: Math.round(network),
      network_ms_per_call: perCall(network),
    },
  };
}

const loadAverage = () => os.loadavg().map((v) => Math.round(v * 100) / 100);

function machine(postgres: string) {
  return {
    cpu: os.cpus()[0]?.model.trim() ?? "unknown",
    cores: os.cpus().length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres,
    load_average_at_end: loadAverage(),
  };
}

await main();
process.exit(0);
