// Benchmark of POST /api/messages/send through the gateway and of each message's whole life
// after it (the dispatcher, the submit to the carrier, the delivery receipt), for the sandbox
// carrier and for the smpp carrier against the test SMSC.
//
//   npm run build && npm run bench:messages
//
// Per carrier, one after the other, each on a fresh PostgreSQL database with the same counts:
// the whole platform (startPlatform: every component, as the embedded mode and the tests start
// it) and the real Redis (BullMQ), the gateway's policies on: authentication (an OAuth access
// token), the rate limit (raised so it never refuses) and the Idempotency-Key store (a new key
// per request). A load generator in a worker thread keeps a fixed number of requests in flight;
// then the benchmark waits until the carrier has taken and delivered every accepted message and
// checks that none was lost or sent twice. cpu-ms per message is the machine's CPU time from the
// start of the load until the last delivery (/proc/stat, as bench/floor-bench.mjs measures it)
// less the load generator's thread and less the SMSC, which runs in a child process
// (bench/smsc-child.mjs): it is the network, not the platform.
// Results: bench/results/messages.md and messages.json.
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import os from "node:os";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { roundTripsPerCall, countRoundTrips } from "./dist/call-control/pg-round-trips.js";
import { machineBusyMs, processCpuMs, threadCpuMs } from "./dist/cpu-time.js";

const settings = {
  carriers: (process.env.BENCH_CARRIERS ?? "sandbox,smpp").split(",").map((name) => name.trim()),
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 32),
  warmup: Number(process.env.BENCH_WARMUP ?? 500),
  requests: Number(process.env.BENCH_REQUESTS ?? 5_000),
  serviceRequests: Number(process.env.BENCH_SERVICE_REQUESTS ?? 2_000),
  senders: Number(process.env.BENCH_SENDERS ?? 10),
  recipients: Number(process.env.BENCH_RECIPIENTS ?? 400),
  senderRate: Number(process.env.BENCH_SENDER_RATE ?? 10),
  receiptDelayMs: Number(process.env.BENCH_RECEIPT_DELAY_MS ?? 200),
  smppThroughput: Number(process.env.BENCH_SMPP_THROUGHPUT ?? 5_000),
  idleSeconds: Number(process.env.BENCH_IDLE_SECONDS ?? 5),
  drainTimeoutMs: Number(process.env.BENCH_DRAIN_TIMEOUT_MS ?? 300_000),
};

/** The benchmark's own pool on the platform's database (left out of the round trips). */
const observerName = "bench-observer";
/** Every statement the platform's pg clients send in this process (as bench:calls counts them). */
const roundTrips = isMainThread ? countRoundTrips([observerName]) : undefined;

/** The message texts are unique across a carrier's run: each load counts its codes from here. */
const codeBase = { warm: 1_000_000, svc: 2_000_000, run: 3_000_000 };
/**
 * PostgreSQL counts a backend's commits in pg_stat_database when the backend flushes its
 * statistics: at most once a second while busy, within 10 s of its going idle
 * (PGSTAT_IDLE_INTERVAL). Counts are read after this long at rest.
 */
const statsFlushMs = 11_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The load generator (worker thread): `count` sends, `concurrency` in flight, either through the
 * gateway (HTTP, mode "gateway") or straight to the messaging service (gRPC, mode "service").
 * It reports its own thread's CPU time, from its start, to be left out of the platform's.
 */
async function runLoad(data) {
  const { count, concurrency } = data;
  const latencies = new Float64Array(count);
  const statuses = {};
  const ids = [];
  const send = data.mode === "service" ? await grpcSender(data) : httpSender(data);
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        const begun = process.hrtime.bigint();
        const { status, id } = await send.one(index);
        latencies[index] = Number(process.hrtime.bigint() - begun) / 1e6;
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (id) ids.push(id);
      }
    }),
  );
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  send.close();
  parentPort.postMessage({ latencies, statuses, ids, elapsedMs, generatorCpuMs: threadCpuMs() });
}

const sendBody = ({ senders, recipients, templateId, label }, index) => {
  const recipient = recipients[index % recipients.length];
  return {
    to: recipient.to,
    from: senders[index % senders.length],
    templateId,
    code: String(codeBase[label] + index),
    consentId: recipient.consentId,
  };
};

function httpSender(data) {
  const agent = new Agent({ keepAlive: true, maxSockets: data.concurrency });
  return {
    close: () => agent.destroy(),
    one: (index) =>
      new Promise((resolve, reject) => {
        const b = sendBody(data, index);
        const body = JSON.stringify({
          channel: "sms",
          to: b.to,
          from: b.from,
          template_id: b.templateId,
          variables: { name: "Ada", code: b.code },
          consent_id: b.consentId,
        });
        const req = request(
          `${data.url}/v1/api/messages/send`,
          {
            method: "POST",
            agent,
            headers: {
              Authorization: `Bearer ${data.token}`,
              "Content-Type": "application/json",
              "Content-Length": Buffer.byteLength(body),
              "Idempotency-Key": `${data.label}-${index}-${randomBytes(6).toString("hex")}`,
            },
          },
          (res) => {
            const chunks = [];
            res.on("data", (chunk) => chunks.push(chunk));
            res.on("end", () =>
              resolve({
                status: res.statusCode,
                id:
                  res.statusCode === 202
                    ? JSON.parse(Buffer.concat(chunks).toString()).id
                    : undefined,
              }),
            );
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(body);
      }),
  };
}

async function grpcSender(data) {
  const { callUnary, createClient } = await import("@switchboard/kit");
  const { messaging } = await import("@switchboard/proto");
  const client = createClient(messaging.MessagingServiceClient, data.grpcAddress);
  return {
    close: () => client.close(),
    one: async (index) => {
      const b = sendBody(data, index);
      try {
        const response = await callUnary(
          "messaging",
          client,
          client.sendMessage,
          {
            accountId: data.accountId,
            channel: messaging.Channel.SMS,
            to: b.to,
            from: b.from,
            templateId: b.templateId,
            variables: { name: "Ada", code: b.code },
            consentId: b.consentId,
            mediaUrls: [],
          },
          {
            deadlineMs: 30_000,
            metadata: {
              "idempotency-key": `${data.label}-${index}-${randomBytes(6).toString("hex")}`,
            },
          },
        );
        return { status: "OK", id: response.message?.id };
      } catch (error) {
        return { status: error.kind ?? "error" };
      }
    },
  };
}

function load(data) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: data });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

const round = (value) => Math.round(value * 100) / 100;
function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  const at = (p) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / Math.max(1, sorted.length);
  return {
    n: sorted.length,
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    mean: round(mean),
    max: round(at(1)),
  };
}

async function main() {
  const shared = {};
  const carriers = [];
  for (const carrier of settings.carriers) carriers.push(await runCarrier(carrier, shared));
  const report = {
    generated_at: new Date().toISOString(),
    command: "npm run bench:messages",
    settings,
    carriers,
    machine: {
      cpu: os.cpus()[0]?.model.trim() ?? "unknown",
      cores: os.cpus().length,
      memory_gb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      postgres: shared.postgres,
    },
  };
  await writeFile(
    new URL("./results/messages.json", import.meta.url),
    `${JSON.stringify(report, null, 2)}\n`,
  );
  await writeFile(new URL("./results/messages.md", import.meta.url), markdown(report));
  console.log(`\n${summaryTable(report)}`);
}

/**
 * The far side of each carrier: the sandbox is part of the platform (its simulated network is a
 * table of the platform's database); the test SMSC runs in a child process, its CPU apart.
 */
const networks = {
  sandbox: async () => ({
    env: { MESSAGING_CARRIER: "sandbox" },
    where:
      "the sandbox carrier, in the platform process (its network is a table of the platform's database)",
    cpuMs: () => 0,
    sends: sandboxSends,
    stop: async () => undefined,
  }),
  smpp: async () => {
    const account = { systemId: "bench", password: "bench" };
    const child = fork(
      new URL("./smsc-child.mjs", import.meta.url),
      [JSON.stringify({ ...account, receiptDelayMs: settings.receiptDelayMs })],
      { stdio: ["ignore", "inherit", "inherit", "ipc"] },
    );
    const { host, port } = await reply(child);
    return {
      env: {
        MESSAGING_CARRIER: "smpp",
        SMPP_HOST: host,
        SMPP_PORT: String(port),
        SMPP_SYSTEM_ID: account.systemId,
        SMPP_PASSWORD: account.password,
        SMPP_THROUGHPUT: String(settings.smppThroughput),
      },
      where: `the test SMSC in a child process (pid ${child.pid}; its CPU time left out)`,
      cpuMs: () => processCpuMs(child.pid),
      sends: async (db, ids) => smscSends(db, ids, await reply(child, "records")),
      stop: async () => {
        if (child.exitCode !== null) return;
        const exited = once(child, "exit");
        child.send("stop");
        await exited;
      },
    };
  },
};

/** The child's next message (after sending it `command`, if given). */
function reply(child, command) {
  return new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.once("exit", (code) => reject(new Error(`the test SMSC exited (${code})`)));
    if (command) child.send(command);
  });
}

/** One carrier's run: a fresh database and platform, the account set up, then the phases. */
async function runCarrier(carrier, shared) {
  const { createLogger } = await import("@switchboard/kit");
  const { createRealTestDatabase } = await import("@switchboard/kit/testing");
  const { seedInventory } = await import("@switchboard/inventory");
  const { startPlatform } = await import("@switchboard/platform");
  const network = await networks[carrier]();
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const database = await createRealTestDatabase("bench_messages");
  const busPrefix = `sbbench${randomBytes(4).toString("hex")}`;
  const clientId = "cli_bench";
  const clientSecret = `sbcs_${randomBytes(24).toString("base64url")}`;
  console.log(
    `bench:messages — ${carrier}: starting the platform on ${database.url.replace(/\/\/[^@]*@/, "//")}`,
  );
  let platform;
  let observer;
  try {
    platform = await startPlatform({
      databaseUrl: database.url,
      redisUrl,
      busPrefix,
      logger: createLogger("bench", { level: process.env.LOG_LEVEL ?? "warn" }),
      serviceEnv: {
        ...process.env,
        NODE_ENV: process.env.NODE_ENV ?? "test",
        SANDBOX_RECEIPT_DELAY_MS: String(settings.receiptDelayMs),
        MESSAGING_SENDER_RATE: String(settings.senderRate),
        MESSAGING_NUMBER_CACHE_MS: "5000",
        ...network.env,
      },
      gatewayEnv: {
        NODE_ENV: "test",
        PORT: "0",
        HOST: "127.0.0.1",
        BOOTSTRAP_ACCOUNT: "acct_bench",
        BOOTSTRAP_CLIENT_ID: clientId,
        BOOTSTRAP_CLIENT_SECRET: clientSecret,
        REDIS_KEY_PREFIX: `${busPrefix}:rl:`,
        RATE_LIMITS: "*=1000000/1000000",
      },
      beforeGateway: (pools) =>
        seedInventory(pools.inventory, { count: 3_000, seed: 5 }).then(() => undefined),
    });
    const url = platform.gateway.url;
    const token = await accessToken(url, clientId, clientSecret);
    const { createPool } = await import("@switchboard/kit");
    observer = createPool(database.url, { max: 2, name: observerName });
    const db = benchQueries(observer);
    shared.postgres ??= await db.postgresVersion();
    const common = {
      ...(await prepareSends(url, token)),
      url,
      token,
      concurrency: settings.concurrency,
      mode: "gateway",
      accountId: "acct_bench",
      grpcAddress: `127.0.0.1:${platform.services.messaging.port}`,
    };
    return { carrier, network: network.where, ...(await phases(carrier, network, db, common)) };
  } finally {
    await observer?.end();
    await platform?.stop();
    await database.drop();
    await network.stop();
    await clearRedis(redisUrl, busPrefix);
  }
}

/** The account's sending numbers, the template and the consenting recipients. */
async function prepareSends(url, token) {
  const api = async (path, init = {}) => {
    const response = await fetch(`${url}${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        ...init.headers,
      },
    });
    const body = await response.json();
    if (response.status >= 300)
      throw new Error(
        `${init.method ?? "GET"} ${path} → ${response.status} ${JSON.stringify(body)}`,
      );
    return body;
  };
  const search = await api(`/v1/api/numbers/search?capabilities=sms&limit=${settings.senders}`);
  const senders = [];
  for (const { number } of search.data) {
    const hold = await api("/v1/api/numbers/hold", {
      method: "POST",
      body: JSON.stringify({ number }),
    });
    await api(`/v1/api/numbers/holds/${hold.id}/assign`, { method: "POST" });
    senders.push(number);
  }
  const template = await api("/v1/api/templates", {
    method: "POST",
    body: JSON.stringify({
      name: "bench-otp",
      channels: ["sms"],
      body: "Hi {{name}}, your code is {{code}}.",
    }),
  });
  const recipients = [];
  for (let i = 0; i < settings.recipients; i++) {
    // The last digit 0: the test SMSC delivers (defaultOutcome), as the sandbox does.
    const to = `+1555020${String(i).padStart(3, "0")}0`;
    const consent = await api("/v1/api/consents", {
      method: "POST",
      body: JSON.stringify({ phone_number: to, channels: ["sms"], source: "import" }),
    });
    recipients.push({ to, consentId: consent.id });
  }
  return { senders, recipients, templateId: template.id };
}

/**
 * The benchmark's own queries on the platform's database, counted: each is a commit of its own,
 * left out of the platform's commits per message.
 */
function benchQueries(pool) {
  const db = {
    queries: 0,
    query: (text, values) => {
      db.queries += 1;
      return pool.query(text, values);
    },
    commits: async () =>
      (
        await db.query(
          "SELECT xact_commit::int AS n FROM pg_stat_database WHERE datname = current_database()",
        )
      ).rows[0].n,
    postgresVersion: async () =>
      String((await db.query("SELECT version() AS v")).rows[0].v).split(" on ")[0],
  };
  return db;
}

const processCpuMsHere = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** Where the CPU time stands now: the machine, this process (the platform) and the network. */
const cpuNow = (network) => ({
  at: Date.now(),
  machine: machineBusyMs(),
  process: processCpuMsHere(),
  network: network.cpuMs(),
});

/**
 * The CPU time spent from `a` to `b`: `served` is the machine's less the load generator's thread
 * and the network's, `platform` this process's less the generator, `rest` the difference
 * (PostgreSQL, Redis, and whatever else the machine ran).
 */
function spent(a, b, generatorMs = 0) {
  const network = b.network - a.network;
  const served = b.machine - a.machine - generatorMs - network;
  const platform = b.process - a.process - generatorMs;
  return { ms: b.at - a.at, served, platform, rest: served - platform, network, generatorMs };
}

/** Warm-up, the service alone (sandbox run only), the platform at rest, then the measured run. */
async function phases(carrier, network, db, common) {
  const ids = [];
  console.log(`warm-up: ${settings.warmup} sends`);
  const warm = await load({ ...common, count: settings.warmup, label: "warm" });
  ids.push(...warm.ids);
  await waitForDrain(db, ids.length, () => undefined);
  let serviceAlone;
  if (carrier === "sandbox" && settings.serviceRequests > 0) {
    const direct = await runServiceAlone(common);
    serviceAlone = direct.summary;
    ids.push(...direct.ids);
    await waitForDrain(db, ids.length, () => undefined);
  }
  const idle = await atRest(db, network);

  console.log(`measuring: ${settings.requests} sends, ${settings.concurrency} in flight`);
  const loadavgBefore = os.loadavg()[0];
  const commits = await commitCounter(db, idle);
  const start = cpuNow(network);
  const statementsAtStart = roundTrips.snapshot();
  const measured = await load({ ...common, count: settings.requests, label: "run" });
  const accepting = cpuNow(network);
  const loadavgAccepting = os.loadavg()[0];
  const accepted = measured.ids.length;
  ids.push(...measured.ids);
  const latency = summarize(measured.latencies);
  const acceptedPerSecond = round(accepted / (measured.elapsedMs / 1000));
  console.log(
    `accepted ${accepted}/${settings.requests} in ${round(measured.elapsedMs)} ms: ${acceptedPerSecond}/s, p50 ${latency.p50} ms, p99 ${latency.p99} ms`,
  );

  const timeline = [];
  const drain = await waitForDrain(db, ids.length, (sample) => timeline.push(sample));
  const end = cpuNow(network);
  await relayed(db);
  const statements = roundTripsPerCall(statementsAtStart, roundTrips.snapshot(), accepted);
  const committed = await commits.since(end.at);
  const lifeMs = await firstAcceptToLastDelivery(db, measured.ids);
  const checks = await verify(db, ids, network);
  const accept = spent(start, accepting, measured.generatorCpuMs);
  const delivery = spent(accepting, end);
  const whole = spent(start, end, measured.generatorCpuMs);
  const perMessage = (ms) => Math.round((ms / Math.max(1, accepted)) * 1000) / 1000;
  const paceCapacity = settings.senders * settings.senderRate;
  const row = {
    send: {
      requests: settings.requests,
      statuses: measured.statuses,
      accepted,
      elapsed_ms: round(measured.elapsedMs),
      accepted_per_second: acceptedPerSecond,
      latency_ms: latency,
      goal: { accepted_per_second: 1000, p99_ms: 50 },
      goal_met: acceptedPerSecond >= 1000 && latency.p99 < 50,
    },
    lifecycle: {
      drained: drain.drained,
      first_accept_to_last_delivery_ms: lifeMs,
      delivered_per_second: round(accepted / (lifeMs / 1000)),
      drain_ms_after_last_accept: end.at - accepting.at,
      pace_capacity_per_second: paceCapacity,
      expected_ms_at_pace: Math.round((accepted / paceCapacity) * 1000),
      timeline,
    },
    cpu: {
      window_ms: whole.ms,
      ms_per_message: perMessage(whole.served),
      accepting_ms_per_message: perMessage(accept.served),
      delivering_ms_per_message: perMessage(delivery.served),
      platform_process_ms_per_message: perMessage(whole.platform),
      rest_ms_per_message: perMessage(whole.rest),
      left_out: {
        load_generator_ms: round(whole.generatorMs),
        network_ms: round(whole.network),
        network_ms_per_message: perMessage(whole.network),
      },
      platform_process_cores_while_accepting: round(accept.platform / accept.ms),
      at_rest_share_ms_per_message: idle && perMessage((idle.cpu_ms_per_second * whole.ms) / 1000),
      idle,
    },
    postgres: {
      ...committed,
      commits_per_message: round(committed.commits / Math.max(1, accepted)),
      // Statements the platform sent (each a round trip) from the load's start until the last
      // delivery and every event relayed, per accepted message, and by kind.
      round_trips_per_message: statements.per_call,
      round_trips_by_kind: statements.by_kind.map((k) => ({
        kind: k.kind,
        per_message: k.per_call,
      })),
      at_rest_share_per_message:
        idle && round((idle.commits_per_second * whole.ms) / 1000 / Math.max(1, accepted)),
    },
    checks,
    load_average_1m: { before: round(loadavgBefore), after_accepting: round(loadavgAccepting) },
  };
  console.log(
    `${carrier}: delivered ${accepted} in ${lifeMs} ms from the first accept (${row.lifecycle.delivered_per_second}/s), ${row.cpu.ms_per_message} cpu-ms, ${row.postgres.commits_per_message} commits and ${row.postgres.round_trips_per_message} PostgreSQL round trips per message; lost ${checks.lost}, duplicates ${checks.duplicates}`,
  );
  return serviceAlone ? { ...row, service_alone: serviceAlone } : row;
}

/** The messaging service alone: the same sends over gRPC, without the gateway's policies. */
async function runServiceAlone(common) {
  console.log(`service alone: ${settings.serviceRequests} sends over gRPC`);
  const cpuBefore = process.cpuUsage();
  const direct = await load({
    ...common,
    mode: "service",
    count: settings.serviceRequests,
    label: "svc",
  });
  const cpu = process.cpuUsage(cpuBefore);
  const latency = summarize(direct.latencies);
  const summary = {
    requests: settings.serviceRequests,
    statuses: direct.statuses,
    accepted: direct.ids.length,
    elapsed_ms: round(direct.elapsedMs),
    accepted_per_second: round(direct.ids.length / (direct.elapsedMs / 1000)),
    latency_ms: latency,
    process_cpu_ms_per_accepted: round(
      (cpu.user + cpu.system) / 1000 / Math.max(1, direct.ids.length),
    ),
  };
  console.log(
    `service alone: ${summary.accepted_per_second}/s, p50 ${latency.p50} ms, p99 ${latency.p99} ms`,
  );
  return { summary, ids: direct.ids };
}

/** The platform with nothing to do (its pollers and timers), per second: CPU and commits. */
async function atRest(db, network) {
  await sleep(statsFlushMs); // the statistics of the work before flushed
  if (settings.idleSeconds <= 0) return undefined;
  const commitsBefore = await db.commits();
  const before = cpuNow(network);
  await sleep(settings.idleSeconds * 1000);
  const rest = spent(before, cpuNow(network));
  const commits = (await db.commits()) - commitsBefore - 1;
  const seconds = rest.ms / 1000;
  return {
    seconds: round(seconds),
    cpu_ms_per_second: round(rest.served / seconds),
    platform_process_cpu_ms_per_second: round(rest.platform / seconds),
    commits_per_second: round(commits / seconds),
  };
}

/**
 * The platform's commits from now until `since(windowEnd)`: read once its statistics are
 * flushed, less the benchmark's own queries and less the commits at rest (`idle`'s rate) between
 * the window's end and the reading.
 */
async function commitCounter(db, idle) {
  const before = await db.commits();
  const queriesBefore = db.queries;
  return {
    since: async (windowEnd) => {
      await sleep(statsFlushMs);
      const readAt = Date.now();
      const counted = (await db.commits()) - before;
      const own = db.queries - queriesBefore;
      const atRest = ((idle?.commits_per_second ?? 0) * (readAt - windowEnd)) / 1000;
      return {
        commits: Math.round(counted - own - atRest),
        bench_queries_left_out: own,
        at_rest_after_the_window_left_out: Math.round(atRest),
      };
    },
  };
}

/** From the first measured message's creation to the last one's delivery, in the database's clock. */
async function firstAcceptToLastDelivery(db, ids) {
  const { rows } = await db.query(
    `SELECT extract(epoch FROM max(delivered_at) - min(created_at)) * 1000 AS ms
       FROM messaging.messages WHERE id = ANY($1)`,
    [ids],
  );
  return Math.round(Number(rows[0].ms));
}

/** Every event relayed to the queues (the relay may trail the last delivery). */
async function relayed(db) {
  for (let i = 0; i < 120; i++) {
    const { rows } = await db.query(
      "SELECT count(*)::int AS n FROM messaging.outbox WHERE published_at IS NULL",
    );
    if (rows[0].n === 0) return;
    await sleep(500);
  }
}

async function clearRedis(redisUrl, prefix) {
  const { Redis } = await import("ioredis");
  const redis = new Redis(redisUrl);
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
  redis.disconnect();
}

async function accessToken(url, id, secret) {
  const response = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "client_credentials" }),
  });
  return (await response.json()).access_token;
}

/** Polls every second until `total` messages exist and none is still queued/sending/sent. */
async function waitForDrain(db, total, onSample) {
  const started = Date.now();
  let lastPending = -1;
  let stalledFor = 0;
  for (;;) {
    const { rows } = await db.query(
      `SELECT count(*)::int AS total,
              count(*) FILTER (WHERE status IN ('queued', 'sending', 'sent'))::int AS pending,
              count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
              count(*) FILTER (WHERE status NOT IN ('queued', 'sending', 'sent', 'delivered'))::int AS other
         FROM messaging.messages`,
    );
    const sample = { t_ms: Date.now() - started, ...rows[0] };
    onSample(sample);
    if (sample.pending > 0 && sample.pending === lastPending) stalledFor += 1;
    else stalledFor = 0;
    lastPending = sample.pending;
    if (stalledFor === 15) {
      // No progress for 15 s: say which messages wait, and where (diagnostics only).
      const stuck = await db.query(
        `SELECT id, status, attempts, scheduled_at, sent_at, updated_at, lease_until,
                provider_message_id IS NOT NULL AS has_provider_id
           FROM messaging.messages WHERE status IN ('queued', 'sending', 'sent') LIMIT 5`,
      );
      console.log(`no progress for 15 s; waiting: ${JSON.stringify(stuck.rows)}`);
    }
    if (sample.total >= total && sample.pending === 0) return { drained: true, ...sample };
    if (Date.now() - started > settings.drainTimeoutMs) return { drained: false, ...sample };
    await sleep(1_000);
  }
}

/**
 * None lost, none sent twice, over every send of the run (warm-up included): each accepted
 * message stored, delivered, handed to the network once and its events all relayed.
 */
async function verify(db, ids, network) {
  const { rows } = await db.query(
    `SELECT
       (SELECT count(*)::int FROM messaging.messages WHERE id = ANY($1)) AS stored,
       (SELECT count(*)::int FROM messaging.messages WHERE id = ANY($1) AND status = 'delivered') AS delivered,
       (SELECT count(*)::int FROM messaging.outbox WHERE resource_id = ANY($1) AND type = 'message.sent') AS sent_events,
       (SELECT count(*)::int FROM messaging.outbox WHERE resource_id = ANY($1) AND published_at IS NULL) AS unpublished_events`,
    [ids],
  );
  const c = rows[0];
  const sends = await network.sends(db, ids);
  const lost = ids.length - Math.min(c.stored, c.delivered, sends.messages_handed_over);
  const duplicates = sends.duplicates + Math.max(0, c.sent_events - ids.length);
  return {
    accepted: ids.length,
    ...c,
    ...sends.checks,
    ...busiestSeconds(sends.list),
    lost,
    duplicates,
    none_lost: lost === 0 && c.unpublished_events === 0,
    none_sent_twice: duplicates === 0 && c.sent_events === ids.length,
  };
}

/** The sandbox's network table: one row per message it took, with how often it was asked. */
async function sandboxSends(db, ids) {
  const { rows } = await db.query(
    `SELECT from_number AS "from", extract(epoch FROM accepted_at) * 1000 AS at, submit_calls
       FROM messaging.sandbox_network WHERE client_ref = ANY($1)`,
    [ids],
  );
  const submits = rows.reduce((sum, row) => sum + row.submit_calls, 0);
  return {
    list: rows.map((row) => ({ from: row.from, at: Number(row.at) })),
    messages_handed_over: rows.length,
    duplicates: submits - rows.length,
    checks: {
      carrier_sends: rows.length,
      max_submits_per_message: rows.reduce((max, row) => Math.max(max, row.submit_calls), 0),
    },
  };
}

/**
 * What the test SMSC accepted (single-segment texts, so one submit_sm per message): every
 * message's provider id among its submits, no message id and no text twice.
 */
async function smscSends(db, ids, records) {
  const { submits } = records;
  const { rows } = await db.query(
    `SELECT provider_message_id AS id FROM messaging.messages WHERE id = ANY($1)`,
    [ids],
  );
  const submitIds = new Set(submits.map((s) => s.id));
  const texts = new Set(submits.map((s) => s.text));
  const matched = rows.filter((row) => submitIds.has(row.id)).length;
  return {
    list: submits.map((s) => ({ from: s.from, at: s.at })),
    messages_handed_over: matched,
    duplicates: submits.length - Math.min(submitIds.size, texts.size),
    checks: {
      carrier_sends: submits.length,
      smsc_distinct_message_ids: submitIds.size,
      smsc_distinct_texts: texts.size,
      messages_with_their_submit: matched,
      smsc_throttled: records.throttled,
      smsc_refused: records.refused,
      receipt_attempts: records.receiptAttempts,
    },
  };
}

/** The pace as the network saw it: the most submits in one clock second, per number and in all. */
function busiestSeconds(list) {
  const perNumber = new Map();
  const perSecond = new Map();
  const bump = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const { from, at } of list) {
    const second = Math.floor(at / 1000);
    bump(perNumber, `${from} ${second}`);
    bump(perSecond, second);
  }
  const most = (map) => [...map.values()].reduce((max, n) => Math.max(max, n), 0);
  return {
    max_submits_by_one_number_in_a_second: most(perNumber),
    max_submits_in_a_second: most(perSecond),
  };
}

/** The headline table: one row per carrier. */
function summaryTable(r) {
  const rows = r.carriers.map(
    (x) =>
      `| ${x.carrier} | **${x.send.accepted_per_second}** | ${x.send.latency_ms.p50} / ${x.send.latency_ms.p99} | **${x.lifecycle.delivered_per_second}** | **${x.cpu.ms_per_message}** | ${x.postgres.commits_per_message} | ${x.postgres.round_trips_per_message} | ${x.checks.lost} / ${x.checks.duplicates} |`,
  );
  return `| carrier | accepted/s | p50/p99 ms | delivered/s | cpu-ms per message | commits per message | round trips per message | lost/duplicates |
|---|---:|---|---:|---:|---:|---:|---|
${rows.join("\n")}`;
}

function markdown(r) {
  const { settings } = r;
  const show = (value) => (value === undefined || value === false ? "—" : value);
  /** A row with one cell per carrier ("—" where the carrier has no such value). */
  const row = (label, cell) => `| ${label} | ${r.carriers.map((x) => show(cell(x))).join(" | ")} |`;
  const head = `| | ${r.carriers.map((x) => x.carrier).join(" | ")} |\n|---|${r.carriers.map(() => "---|").join("")}`;
  const service = r.carriers.find((x) => x.service_alone)?.service_alone;
  const idle = (x, key) => x.cpu.idle?.[key];
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

if (!isMainThread) {
  await runLoad(workerData);
} else if (process.argv.includes("--render")) {
  // Rewrites messages.md from messages.json (after a change to the report's wording).
  const { readFile } = await import("node:fs/promises");
  const report = JSON.parse(
    await readFile(new URL("./results/messages.json", import.meta.url), "utf8"),
  );
  await writeFile(new URL("./results/messages.md", import.meta.url), markdown(report));
} else {
  await main();
}
