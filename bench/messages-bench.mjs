// Benchmark of POST /api/messages/send through the gateway, and of the queue draining it.
//
//   npm run build && npm run bench:messages
//
// The whole platform (startPlatform: every component, as the embedded mode and the tests start
// it) on a fresh PostgreSQL database and the real Redis (BullMQ), the gateway's policies on:
// authentication (an OAuth access token), the rate limit (raised so it never refuses) and the
// Idempotency-Key store (a new key per request). A load generator in a worker thread keeps a
// fixed number of requests in flight; then the benchmark waits until the sandbox carrier has
// taken and delivered every accepted message and checks that none was lost or sent twice.
// Results: bench/results/messages.md and messages.json.
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import os from "node:os";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";

const settings = {
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 32),
  warmup: Number(process.env.BENCH_WARMUP ?? 500),
  requests: Number(process.env.BENCH_REQUESTS ?? 5_000),
  serviceRequests: Number(process.env.BENCH_SERVICE_REQUESTS ?? 2_000),
  senders: Number(process.env.BENCH_SENDERS ?? 10),
  recipients: Number(process.env.BENCH_RECIPIENTS ?? 400),
  senderRate: Number(process.env.BENCH_SENDER_RATE ?? 10),
  receiptDelayMs: Number(process.env.BENCH_RECEIPT_DELAY_MS ?? 200),
  drainTimeoutMs: Number(process.env.BENCH_DRAIN_TIMEOUT_MS ?? 300_000),
};

/**
 * The load generator (worker thread): `count` sends, `concurrency` in flight, either through the
 * gateway (HTTP, mode "gateway") or straight to the messaging service (gRPC, mode "service").
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
  parentPort.postMessage({ latencies, statuses, ids, elapsedMs });
}

const sendBody = ({ senders, recipients, templateId }, index) => {
  const recipient = recipients[index % recipients.length];
  return {
    to: recipient.to,
    from: senders[index % senders.length],
    templateId,
    code: String(100000 + (index % 900000)),
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
            channel: "sms",
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
  // The services' settings (the messaging pace and the sandbox's receipt delay).
  const serviceEnv = {
    ...process.env,
    NODE_ENV: process.env.NODE_ENV ?? "test",
    SANDBOX_RECEIPT_DELAY_MS: String(settings.receiptDelayMs),
    MESSAGING_SENDER_RATE: String(settings.senderRate),
    MESSAGING_NUMBER_CACHE_MS: "5000",
  };
  const { createLogger } = await import("@switchboard/kit");
  const { createRealTestDatabase } = await import("@switchboard/kit/testing");
  const { seedInventory } = await import("@switchboard/inventory");
  const { startPlatform } = await import("@switchboard/platform");
  const { Redis } = await import("ioredis");
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const database = await createRealTestDatabase("bench_messages");
  const busPrefix = `sbbench${randomBytes(4).toString("hex")}`;
  const clientId = "cli_bench";
  const clientSecret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const logger = createLogger("bench", { level: process.env.LOG_LEVEL ?? "warn" });
  console.log(
    `bench:messages — starting the platform on ${database.url.replace(/\/\/[^@]*@/, "//")}`,
  );
  const platform = await startPlatform({
    databaseUrl: database.url,
    redisUrl,
    busPrefix,
    logger,
    serviceEnv,
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
  const pool = platform.pools.messaging;
  try {
    const token = await accessToken(url, clientId, clientSecret);
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
      const to = `+1555020${String(i).padStart(3, "0")}0`;
      const consent = await api("/v1/api/consents", {
        method: "POST",
        body: JSON.stringify({ phone_number: to, channels: ["sms"], source: "import" }),
      });
      recipients.push({ to, consentId: consent.id });
    }
    const common = {
      url,
      token,
      senders,
      recipients,
      templateId: template.id,
      concurrency: settings.concurrency,
      mode: "gateway",
      accountId: "acct_bench",
      grpcAddress: `127.0.0.1:${platform.services.messaging.port}`,
    };
    const count = async () =>
      (await pool.query("SELECT count(*)::int AS n FROM messaging.messages")).rows[0].n;
    console.log(`warm-up: ${settings.warmup} sends`);
    const warm = await load({ ...common, count: settings.warmup, label: "warm" });
    await waitForDrain(pool, warm.ids.length, settings.drainTimeoutMs, () => undefined);

    // The messaging service alone: the same sends over gRPC, without the gateway's policies.
    console.log(`service alone: ${settings.serviceRequests} sends over gRPC`);
    const serviceCpuBefore = process.cpuUsage();
    const direct = await load({
      ...common,
      mode: "service",
      count: settings.serviceRequests,
      label: "svc",
    });
    const serviceCpu = process.cpuUsage(serviceCpuBefore);
    const serviceLatency = summarize(direct.latencies);
    const service = {
      requests: settings.serviceRequests,
      statuses: direct.statuses,
      accepted: direct.ids.length,
      elapsed_ms: round(direct.elapsedMs),
      accepted_per_second: round(direct.ids.length / (direct.elapsedMs / 1000)),
      latency_ms: serviceLatency,
      process_cpu_ms_per_accepted: round(
        (serviceCpu.user + serviceCpu.system) / 1000 / Math.max(1, direct.ids.length),
      ),
    };
    console.log(
      `service alone: ${service.accepted_per_second}/s, p50 ${serviceLatency.p50} ms, p99 ${serviceLatency.p99} ms`,
    );
    await waitForDrain(
      pool,
      warm.ids.length + direct.ids.length,
      settings.drainTimeoutMs,
      () => undefined,
    );
    const baseline = { rows: [{ n: await count() }] };

    console.log(`measuring: ${settings.requests} sends, ${settings.concurrency} in flight`);
    const loadavgBefore = os.loadavg()[0];
    const commits = async () =>
      (
        await pool.query(
          "SELECT xact_commit::int AS n FROM pg_stat_database WHERE datname = current_database()",
        )
      ).rows[0].n;
    const commitsBefore = await commits();
    const cpuBefore = process.cpuUsage();
    const measured = await load({ ...common, count: settings.requests, label: "run" });
    const acceptedAt = Date.now();
    const cpu = process.cpuUsage(cpuBefore);
    const loadavgDuring = os.loadavg()[0];
    const accepted = measured.ids.length;
    const latency = summarize(measured.latencies);
    const acceptedPerSecond = round(accepted / (measured.elapsedMs / 1000));
    console.log(
      `accepted ${accepted}/${settings.requests} in ${round(measured.elapsedMs)} ms: ${acceptedPerSecond}/s, p50 ${latency.p50} ms, p99 ${latency.p99} ms`,
    );

    const timeline = [];
    const drain = await waitForDrain(
      pool,
      baseline.rows[0].n + accepted,
      settings.drainTimeoutMs,
      (sample) => timeline.push(sample),
    );
    const drainMs = Date.now() - acceptedAt;
    // Every event relayed to the queues (the relay may trail the last delivery).
    for (let i = 0; i < 120; i++) {
      const { rows } = await pool.query(
        "SELECT count(*)::int AS n FROM messaging.outbox WHERE published_at IS NULL",
      );
      if (rows[0].n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // statistics are flushed lazily
    const commitsPerMessage = round((await commits()) - commitsBefore) / Math.max(1, accepted);
    const checks = await verify(pool, [...measured.ids, ...direct.ids]);
    const paceCapacity = settings.senders * settings.senderRate;
    const expectedDrainMs = Math.round((accepted / paceCapacity) * 1000);
    const report = {
      generated_at: new Date().toISOString(),
      command: "npm run bench:messages",
      settings: { ...settings, senders: senders.length },
      send: {
        requests: settings.requests,
        statuses: measured.statuses,
        accepted,
        elapsed_ms: round(measured.elapsedMs),
        accepted_per_second: acceptedPerSecond,
        latency_ms: latency,
        process_cpu_ms_per_accepted: round((cpu.user + cpu.system) / 1000 / Math.max(1, accepted)),
        process_cpu_share_of_one_core: round((cpu.user + cpu.system) / 1000 / measured.elapsedMs),
        goal: { accepted_per_second: 1000, p99_ms: 50 },
        goal_met: acceptedPerSecond >= 1000 && latency.p99 < 50,
      },
      service_alone: service,
      drain: {
        pace_capacity_per_second: paceCapacity,
        expected_ms_at_pace: expectedDrainMs,
        drained: drain.drained,
        drain_ms_after_last_accept: drainMs,
        sent_per_second_overall: round(accepted / ((drainMs + measured.elapsedMs) / 1000)),
        timeline,
      },
      checks,
      postgres_commits_per_message: round(commitsPerMessage),
      machine: {
        ...(await machine(pool, loadavgBefore)),
        loadavg_1m_after_accepting: round(loadavgDuring),
      },
    };
    await writeFile(
      new URL("./results/messages.json", import.meta.url),
      `${JSON.stringify(report, null, 2)}\n`,
    );
    await writeFile(new URL("./results/messages.md", import.meta.url), markdown(report));
    console.log(
      `drained: ${drain.drained} in ${drainMs} ms (pace ${paceCapacity}/s → ${expectedDrainMs} ms); checks: ${JSON.stringify(checks)}`,
    );
  } finally {
    await platform.stop();
    await database.drop();
    const redis = new Redis(redisUrl);
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${busPrefix}*`, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
    redis.disconnect();
  }
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

/** Polls until `total` messages exist and none is still queued/sending/sent. */
async function waitForDrain(pool, total, timeoutMs, onSample) {
  const started = Date.now();
  let lastPending = -1;
  let stalledFor = 0;
  for (;;) {
    const { rows } = await pool.query(
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
      const stuck = await pool.query(
        `SELECT id, status, attempts, scheduled_at, sent_at, updated_at, lease_until,
                provider_message_id IS NOT NULL AS has_provider_id
           FROM messaging.messages WHERE status IN ('queued', 'sending', 'sent') LIMIT 5`,
      );
      console.log(`no progress for 15 s; waiting: ${JSON.stringify(stuck.rows)}`);
    }
    if (sample.total >= total && sample.pending === 0) return { drained: true, ...sample };
    if (Date.now() - started > timeoutMs) return { drained: false, ...sample };
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** None lost, none sent twice: every accepted message delivered once, its events all relayed. */
async function verify(pool, ids) {
  const { rows } = await pool.query(
    `SELECT
       (SELECT count(*)::int FROM messaging.messages WHERE id = ANY($1)) AS stored,
       (SELECT count(*)::int FROM messaging.messages WHERE id = ANY($1) AND status = 'delivered') AS delivered,
       (SELECT count(*)::int FROM messaging.sandbox_network WHERE client_ref = ANY($1)) AS carrier_sends,
       (SELECT coalesce(max(submit_calls), 0)::int FROM messaging.sandbox_network WHERE client_ref = ANY($1)) AS max_submits_per_message,
       (SELECT count(*)::int FROM messaging.outbox WHERE resource_id = ANY($1) AND type = 'message.sent') AS sent_events,
       (SELECT count(*)::int FROM messaging.outbox WHERE resource_id = ANY($1) AND published_at IS NULL) AS unpublished_events`,
    [ids],
  );
  const c = rows[0];
  // The pace as the carrier saw it: submits per sending number and per clock second.
  const pace = await pool.query(
    `WITH per_second AS (
       SELECT from_number, date_trunc('second', accepted_at) AS second, count(*)::int AS n
         FROM messaging.sandbox_network WHERE client_ref = ANY($1) GROUP BY 1, 2)
     SELECT max(n)::int AS max_per_sender_second,
            (SELECT max(total)::int FROM (SELECT sum(n) AS total FROM per_second GROUP BY second) t)
              AS max_per_second
       FROM per_second`,
    [ids],
  );
  return {
    ...c,
    max_submits_by_one_number_in_a_second: pace.rows[0].max_per_sender_second,
    max_submits_in_a_second: pace.rows[0].max_per_second,
    accepted: ids.length,
    none_lost:
      c.stored === ids.length && c.delivered === ids.length && c.carrier_sends === ids.length,
    none_sent_twice: c.max_submits_per_message <= 1 && c.sent_events === ids.length,
  };
}

async function machine(pool, loadavgBefore) {
  const { rows } = await pool.query("SELECT version() AS v");
  return {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres: String(rows[0].v).split(" on ")[0],
    loadavg_1m_before_run: round(loadavgBefore),
  };
}

function markdown(r) {
  const s = r.send;
  const d = r.drain;
  const c = r.checks;
  return `# POST /api/messages/send through the gateway

Generated ${r.generated_at} by \`${r.command}\`.

The whole platform (\`startPlatform\`: every component in one process, as the embedded mode starts them) on a fresh PostgreSQL database and the real Redis (BullMQ queues), with the gateway's policies on: an OAuth access token verified per request, the per-permission rate limit (raised so it never refuses), and the Idempotency-Key store with a new key per request. A load generator in a worker thread kept ${r.settings.concurrency} requests in flight over keep-alive connections: ${s.requests} sends (after ${r.settings.warmup} warm-up) of one template from ${r.settings.senders} sending numbers to ${r.settings.recipients} consenting sandbox recipients (all delivered by the sandbox).

## Accepting

| | |
|---|---|
| accepted (202) | ${s.accepted} of ${s.requests} (${JSON.stringify(s.statuses)}) |
| elapsed | ${s.elapsed_ms} ms |
| **accepted per second** | **${s.accepted_per_second}** |
| latency p50 / p90 / p99 / max | ${s.latency_ms.p50} / ${s.latency_ms.p90} / ${s.latency_ms.p99} / ${s.latency_ms.max} ms |
| process CPU per accepted send (all components, the drain running alongside, and the load generator) | ${s.process_cpu_ms_per_accepted} ms |
| process CPU while accepting, in cores | ${s.process_cpu_share_of_one_core} |
| PostgreSQL commits per message, accept to delivery (all components) | ${r.postgres_commits_per_message} |
| goal (≥ 1000/s at p99 < 50 ms) | ${s.goal_met ? "**met**" : "**not met**"} |

## The messaging service alone

The same sends straight to MessagingService over gRPC (no gateway: no token, rate limit, Idempotency-Key store or request record; the service still stores each key with its message), ${r.service_alone.requests} of them at the same concurrency, before the gateway run.

| | |
|---|---|
| accepted | ${r.service_alone.accepted} of ${r.service_alone.requests} (${JSON.stringify(r.service_alone.statuses)}) |
| **accepted per second** | **${r.service_alone.accepted_per_second}** |
| latency p50 / p90 / p99 / max | ${r.service_alone.latency_ms.p50} / ${r.service_alone.latency_ms.p90} / ${r.service_alone.latency_ms.p99} / ${r.service_alone.latency_ms.max} ms |
| process CPU per accepted send (the drain alongside, and the load generator) | ${r.service_alone.process_cpu_ms_per_accepted} ms |

## Draining

Sends leave through the queue paced per sending number (MESSAGING_SENDER_RATE = ${r.settings.senderRate}/s each, ${d.pace_capacity_per_second}/s for ${r.settings.senders} numbers); the sandbox carrier's receipts arrive ${r.settings.receiptDelayMs} ms after the submit.

| | |
|---|---|
| drained | ${d.drained ? "yes" : "**no**"} |
| time from the last accept until every message was delivered | ${d.drain_ms_after_last_accept} ms |
| at the pace alone (accepted ÷ ${d.pace_capacity_per_second}/s, counted from the first accept) | ${d.expected_ms_at_pace} ms |
| messages per second, first accept to last delivery | ${d.sent_per_second_overall} |

## None lost, none sent twice

| check | value |
|---|---|
| accepted | ${c.accepted} |
| stored | ${c.stored} |
| delivered | ${c.delivered} |
| handed to the carrier (sandbox network rows) | ${c.carrier_sends} |
| most submits by one number in one clock second (its pace: ${r.settings.senderRate}/s) | ${c.max_submits_by_one_number_in_a_second} |
| most submits in one clock second, all numbers (pace: ${r.drain.pace_capacity_per_second}/s) | ${c.max_submits_in_a_second} |
| most submits of one message | ${c.max_submits_per_message} |
| message.sent events (usage facts) | ${c.sent_events} |
| events not yet relayed | ${c.unpublished_events} |
| **none lost** (both runs) | **${c.none_lost}** |
| **none sent twice** (both runs) | **${c.none_sent_twice}** |

## Reading these numbers

Every component ran in one Node.js process, on one event loop and so on one core at most (the load generator had a thread of its own): while accepting the process used ${s.process_cpu_share_of_one_core} cores in all, on a ${r.machine.cores}-core machine shared with other work (load average ${r.machine.loadavg_1m_before_run}). Each accepted send cost ${s.process_cpu_ms_per_accepted} ms of that process's CPU across every component (gateway policies and request record, the messaging service, the relays and workers draining earlier sends, the usage and webhook consumers, the load generator), and ${r.postgres_commits_per_message} PostgreSQL commits from acceptance to delivery. The accept rate is bounded by that one process, not by a lock or a queue: the messaging service alone accepted ${r.service_alone.accepted_per_second}/s under the same conditions. The mesh mode runs each component in its own process. Submits are paced by booking each message's turn at its number's rate; when the workers fall behind, a late message goes as soon as a worker is free, so one clock second can carry a few more than the rate (see the table above).

| machine | |
|---|---|
| cpu | ${r.machine.cpu} |
| cores | ${r.machine.cores} (shared) |
| load average (1 min) before / after accepting | ${r.machine.loadavg_1m_before_run} / ${r.machine.loadavg_1m_after_accepting} |
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
