#!/usr/bin/env node
/**
 * `npm run bench:idle`: what the platform costs with nothing to do, and whether the first request
 * after a rest is slower than the ones that follow it. The embedded mode (`npm start`) and the
 * mesh (`npm run mesh`, each component its own process) are started as users start them, as
 * child processes; once they serve, 50 reads warm them, they settle (BENCH_SETTLE_SECONDS,
 * default 15), then each process's CPU time (utime + stime of /proc/<pid>/stat: all its threads)
 * and wake-ups (voluntary context switches of its threads) are read over BENCH_IDLE_SECONDS
 * (default 30), with, for the mesh, the PostgreSQL and Redis servers' and the database's commits.
 * Then one authenticated `GET /v1/api/agents?limit=1` is timed and compared with the median of 50
 * right after it, after that rest and after each of the rests that follow (BENCH_REST_CYCLES rests
 * in all, default 3), every read on a connection of its own. The monolith anchor (bench/anchor.mjs)
 * and bare express (its hello) are rested and read the same way, for reference: what a rest costs
 * any process on this machine. BENCH_TOPOLOGIES (default "embedded,mesh,anchor,bare express")
 * picks. Results: bench/results/idle.{json,md}.
 */
import { fork, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { request } from "node:http";
import { createServer } from "node:net";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { summarizeLatency } from "@switchboard/kit";
import { createRealTestDatabase, testServerUrl } from "@switchboard/kit/testing";
import { freeMeshPorts, meshComponents } from "@switchboard/platform/mesh";
import { anchorCopy } from "./anchor.mjs";
import {
  listProcesses,
  machineBusyMs,
  processCpuMs,
  processWakeups,
  reapedChildrenCpuMs,
} from "./dist/cpu-time.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const settleMs = Number(process.env.BENCH_SETTLE_SECONDS ?? 15) * 1000;
const idleMs = Number(process.env.BENCH_IDLE_SECONDS ?? 30) * 1000;
const redisUrl = process.env.REDIS_URL || "redis://127.0.0.1:6379";
const warmRequests = 50;
/** Rests in a row, each ended by one request: the added latency is their median. */
const restCycles = Math.max(1, Number(process.env.BENCH_REST_CYCLES ?? 3));
const goalPercent = 1;
const client = { id: "cli_bench", secret: `sbcs_${randomBytes(24).toString("base64url")}` };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** How each topology is started, as a user starts it; each returns the launched process. */
const topologies = {
  embedded: async () => {
    const dataDir = mkdtempSync(join(os.tmpdir(), "switchboard-idle-"));
    const port = await freePort();
    const launched = await launch("platform/dist/embedded.js", /Try it:/, {
      ...process.env,
      NODE_ENV: "development",
      DATA_DIR: dataDir,
      PORT: String(port),
      ADMIN_PORT: String(await freePort()),
      EMBEDDED_SEED_COUNT: "50",
      BOOTSTRAP_CLIENT_ID: client.id,
      BOOTSTRAP_CLIENT_SECRET: client.secret,
      RATE_LIMITS: "*=1000000/1000000",
      REDIS_URL: "",
      DATABASE_URL: "",
    });
    return {
      ...launched,
      url: `http://127.0.0.1:${port}`,
      where: "one process: every component, PGlite (the database) and the in-memory queues",
      stop: async () => {
        await launched.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
  mesh: async () => {
    const database = await createRealTestDatabase("bench_idle");
    const ports = await freeMeshPorts();
    const prefix = `idle_${randomBytes(4).toString("hex")}`;
    // Every listener on loopback: HOST, <NAME>_GRPC_HOST beside each port variable, ADMIN_HOST.
    const loopback = Object.fromEntries(
      [...meshComponents.map((c) => c.portVariable.replace(/PORT$/, "HOST")), "ADMIN_HOST"].map(
        (name) => [name, "127.0.0.1"],
      ),
    );
    // The port variables `npm run mesh` reads (platform/src/mesh/mesh-config.ts).
    const portVariables = Object.fromEntries(
      meshComponents.flatMap((c) => [
        [c.portVariable, String(ports.listen[c.name])],
        [`${c.name.toUpperCase().replace(/-/g, "_")}_ADMIN_PORT`, String(ports.admin[c.name])],
      ]),
    );
    const launched = await launch("platform/dist/mesh-main.js", /mesh \| gateway http/, {
      ...process.env,
      ...loopback,
      ...portVariables,
      NODE_ENV: "development",
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      REDIS_QUEUE_PREFIX: prefix,
      REDIS_KEY_PREFIX: `${prefix}:rl:`,
      WEBHOOK_SINK_PORT: String(ports.webhookSink),
      PUBLIC_URL: "http://switchboard.bench",
      BOOTSTRAP_ACCOUNT: "acct_bench",
      BOOTSTRAP_CLIENT_ID: client.id,
      BOOTSTRAP_CLIENT_SECRET: client.secret,
      RATE_LIMITS: "*=1000000/1000000",
    });
    return {
      ...launched,
      url: `http://127.0.0.1:${ports.listen.gateway}`,
      where: "the supervisor and each component its own process, on PostgreSQL and Redis",
      database: new URL(database.url).pathname.slice(1),
      stop: async () => {
        await launched.stop();
        await database.drop();
      },
    };
  },
  anchor: () => anchorServing("naive"),
  "bare express": () => anchorServing("hello"),
};

/**
 * The monolith anchor serving (bench/anchor.mjs): "naive" is the hand-written process with the
 * floor request's guarantees on PostgreSQL and Redis, "hello" bare express answering a constant.
 */
async function anchorServing(kind) {
  const port = await freePort();
  const child = fork(join(anchorCopy(), "monolith-anchor.mjs"), ["serve", kind, String(port)], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const [ready] = await once(child, "message");
  const url = `http://127.0.0.1:${port}`;
  return {
    pid: child.pid,
    url,
    reference: true,
    ...(kind === "hello"
      ? {
          readUrl: `${url}/hello`,
          where: "bare express answering a constant (the anchor's hello), no store",
        }
      : {
          token: ready.token,
          where:
            "the monolith anchor: one express process, on PostgreSQL and Redis (bench/monolith-anchor, or ANCHOR_DIR)",
          database: "perfanchor",
        }),
    stop: async () => {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** `node <entry>` from the repository root; resolves once its output matches `ready`. */
async function launch(entry, ready, env) {
  const child = spawn(process.execPath, [entry], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk) => (output = (output + chunk).slice(-100_000));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (!stopping) console.error(`${entry} exited (${code ?? signal}):\n${output.slice(-5_000)}`);
  });
  const started = Date.now();
  while (!ready.test(output)) {
    if (child.exitCode !== null) throw new Error(`${entry} exited ${child.exitCode}:\n${output}`);
    if (Date.now() - started > 120_000) {
      child.kill("SIGKILL");
      throw new Error(`${entry} did not start within 120 s:\n${output}`);
    }
    await sleep(100);
  }
  return {
    pid: child.pid,
    stop: async () => {
      stopping = true;
      if (child.exitCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const kill = setTimeout(() => child.kill("SIGKILL"), 90_000);
      await exited;
      clearTimeout(kill);
    },
  };
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The launched process and its children, each named: a mesh component by its entry, the
 * supervisor (or the embedded process) by the topology.
 */
function processesOf(topology, pid) {
  const children = listProcesses()
    .filter((p) => p.ppid === pid)
    .map((p) => ({
      name: meshComponents.find((c) => p.cmdline.includes(c.entry))?.name ?? `${p.comm} ${p.pid}`,
      pids: () => [p.pid],
    }));
  const self = { mesh: "supervisor (mesh-main)", anchor: "monolith-anchor" }[topology] ?? topology;
  return [{ name: self, pids: () => [pid] }, ...children];
}

/**
 * The stores' servers, measured whole: every process of PostgreSQL (the postmaster counts the
 * backends that ended: their time is its children's) and of Redis, whoever else uses them; and
 * the backends connected to this mesh's database, in all and by pool (application_name).
 */
async function storesOf(observer, database) {
  const named = (comm) => () =>
    listProcesses()
      .filter((p) => p.comm === comm)
      .map((p) => p.pid);
  const postgres = listProcesses().filter((p) => p.comm === "postgres");
  const postmaster = postgres.find((p) => !postgres.some((q) => q.pid === p.ppid))?.pid;
  const backends = (pool) => async () =>
    (
      await observer.query(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND ($2::text IS NULL OR application_name = $2)",
        [database, pool],
      )
    ).rows.map((row) => row.pid);
  const { rows: pools } = await observer.query(
    "SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE datname = $1 ORDER BY 1",
    [database],
  );
  return [
    { name: "PostgreSQL server (every process)", pids: named("postgres"), reaper: postmaster },
    { name: "of which this database's backends", pids: backends(null) },
    ...pools.map((pool) => ({ name: `… of the pool "${pool.name}"`, pids: backends(pool.name) })),
    { name: "Redis server", pids: named("redis-server") },
  ];
}

/** Each process's CPU time and wake-ups now, and what its reaper counted of those that ended. */
async function sample(group) {
  const each = new Map();
  for (const pid of await group.pids()) {
    try {
      each.set(pid, { cpu: processCpuMs(pid), wakeups: processWakeups(pid) });
    } catch {
      // it ended meanwhile
    }
  }
  return { each, reaped: group.reaper ? reapedChildrenCpuMs(group.reaper) : undefined };
}

/**
 * What a group of processes used between two samples. A process that ended is counted through
 * its reaper where there is one (the reaper's count holds its whole life, less what was counted
 * before); elsewhere its share of the window is lost, which matters only for short-lived ones.
 */
function used(a, b, seconds) {
  let cpu = 0;
  let wakeups = 0;
  for (const [pid, now] of b.each) {
    const then = a.each.get(pid) ?? { cpu: 0, wakeups: 0 };
    cpu += now.cpu - then.cpu;
    wakeups += now.wakeups - then.wakeups;
  }
  if (a.reaped !== undefined && b.reaped !== undefined) {
    cpu += b.reaped - a.reaped;
    for (const [pid, then] of a.each) if (!b.each.has(pid)) cpu -= then.cpu;
  }
  const started = [...b.each.keys()].filter((pid) => !a.each.has(pid)).length;
  return {
    percent_of_one_core: round(cpu / seconds / 10, 3),
    cpu_ms: round(cpu),
    wakeups_per_second: round(wakeups / seconds, 1),
    processes: b.each.size,
    started_in_window: started,
  };
}

const commits = async (observer, database) =>
  Number(
    (
      await observer.query("SELECT xact_commit FROM pg_stat_database WHERE datname = $1", [
        database,
      ])
    ).rows[0].xact_commit,
  );

async function accessToken(url) {
  const response = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  return (await response.json()).access_token;
}

/**
 * One authenticated read on a connection of its own, timed until its body is in (ms). Every read
 * opens its connection, so the first after a rest (when a kept-alive one would have closed) and
 * the warm ones pay the same.
 */
function timedRead(readUrl, token) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      readUrl,
      {
        agent: false,
        headers: { Connection: "close", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode !== 200) reject(new Error(`GET ${readUrl} → ${res.statusCode}`));
          else resolve(performance.now() - started);
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function reads(readUrl, token, count) {
  const list = [];
  for (let i = 0; i < count; i++) list.push(await timedRead(readUrl, token));
  return list;
}

/** The first read after a rest, and the median of the reads right after it. */
async function firstAfterRest(readUrl, token) {
  const first = await timedRead(readUrl, token);
  const warm = summarizeLatency(await reads(readUrl, token, warmRequests));
  return {
    after_rest_ms: round(first, 3),
    warm_median_ms: warm.p50,
    added_ms: round(first - warm.p50, 3),
  };
}

/** One topology: started, warmed, at rest, the first request after the rest, stopped. */
async function measure(topology) {
  console.log(`bench:idle — ${topology}: starting`);
  const running = await topologies[topology]();
  const observer = running.database && new pg.Client({ connectionString: testServerUrl() });
  try {
    await observer?.connect();
    const readUrl = running.readUrl ?? `${running.url}/v1/api/agents?limit=1`;
    const token = running.reference ? running.token : await accessToken(running.url);
    await reads(readUrl, token, warmRequests);
    console.log(
      `${topology}: settling ${settleMs / 1000} s, then ${restCycles} × ${idleMs / 1000} s at rest`,
    );
    await sleep(settleMs);
    const processes = processesOf(topology, running.pid);
    const stores = observer ? await storesOf(observer, running.database) : [];
    const now = async () => ({
      at: performance.now(),
      machine: machineBusyMs(),
      processes: await Promise.all(processes.map(sample)),
      stores: await Promise.all(stores.map(sample)),
      commits: observer && (await commits(observer, running.database)),
    });
    const before = await now();
    await sleep(idleMs);
    const after = await now();
    const seconds = (after.at - before.at) / 1000;
    const rests = [await firstAfterRest(readUrl, token)];
    while (rests.length < restCycles) {
      await sleep(idleMs);
      rests.push(await firstAfterRest(readUrl, token));
    }
    const median = (key) => round(summarizeLatency(rests.map((rest) => rest[key])).p50, 3);
    const rows = (groups, key) =>
      groups.map((group, i) => ({
        name: group.name,
        ...used(before[key][i], after[key][i], seconds),
      }));
    const result = {
      topology,
      reference: running.reference === true,
      where: running.where,
      seconds: round(seconds),
      processes: rows(processes, "processes"),
      stores: rows(stores, "stores"),
      commits_per_second: observer ? round((after.commits - before.commits) / seconds) : null,
      machine_percent_of_one_core: round((after.machine - before.machine) / seconds / 10, 1),
      first_request: {
        after_rest_ms: median("after_rest_ms"),
        warm_median_ms: median("warm_median_ms"),
        added_ms: median("added_ms"),
        rests,
      },
      load_average_at_end: os.loadavg().map((v) => round(v)),
    };
    for (const row of [...result.processes, ...result.stores])
      console.log(
        `${topology} · ${row.name}: ${row.percent_of_one_core} % of one core, ${row.wakeups_per_second} wake-ups/s`,
      );
    console.log(
      `${topology}: ${result.commits_per_second ?? "—"} commits/s; first request after each rest ${rests.map((rest) => `${rest.after_rest_ms} ms (warm ${rest.warm_median_ms})`).join(", ")}`,
    );
    return result;
  } finally {
    await observer?.end();
    await running.stop();
  }
}

const only = (process.env.BENCH_TOPOLOGIES ?? "embedded,mesh,anchor,bare express")
  .split(",")
  .map((s) => s.trim());
const results = [];
for (const topology of only) results.push(await measure(topology));
const report = {
  generated_at: new Date().toISOString(),
  command: "npm run bench:idle",
  settle_seconds: settleMs / 1000,
  idle_seconds: idleMs / 1000,
  rest_cycles: restCycles,
  goal_percent_of_one_core: goalPercent,
  results,
  machine: {
    cpu: os.cpus()[0]?.model.trim() ?? "unknown",
    cores: os.cpus().length,
    node: process.version,
  },
};
await writeFile(
  new URL("./results/idle.json", import.meta.url),
  `${JSON.stringify(report, null, 2)}\n`,
);
await writeFile(new URL("./results/idle.md", import.meta.url), markdown(report));
console.log(markdown(report));

function storesMarkdown(storeRows) {
  return `The stores the mesh uses, over the same window. They are the machine's servers, shared with whatever else runs on it, so these are upper bounds of the mesh's share; the backends of the mesh's database are its own (a backend that started and ended inside the window is counted in the server's row only, through the postmaster).

| topology | server | % of one core | wake-ups/s | processes |
|---|---|---:|---:|---|
${storeRows.join("\n")}

`;
}

function markdown(r) {
  const goal = (result, row) =>
    result.reference
      ? "(reference)"
      : row.percent_of_one_core <= r.goal_percent_of_one_core
        ? "met"
        : "**not met**";
  const processRows = r.results.flatMap((t) =>
    t.processes.map(
      (p) =>
        `| ${t.topology} | ${p.name} | **${p.percent_of_one_core}** | ${p.wakeups_per_second} | ${goal(t, p)} |`,
    ),
  );
  const storeRows = r.results.flatMap((t) =>
    t.stores.map(
      (s) =>
        `| ${t.topology} | ${s.name} | ${s.percent_of_one_core} | ${s.wakeups_per_second} | ${s.processes} (${s.started_in_window} started in the window) |`,
    ),
  );
  const firstRows = r.results.map(
    (t) =>
      `| ${t.topology} | ${t.first_request.after_rest_ms} | ${t.first_request.warm_median_ms} | **${t.first_request.added_ms}** | ${round((100 * t.first_request.added_ms) / t.first_request.warm_median_ms, 0)} % | ${t.first_request.rests.map((rest) => rest.added_ms).join(", ")} |`,
  );
  const machineRows = r.results.map(
    (t) =>
      `| ${t.topology} | ${t.machine_percent_of_one_core} % of one core | ${t.commits_per_second ?? (t.reference ? "— (no database)" : "— (PGlite, in the process)")} | ${t.load_average_at_end.join(", ")} |`,
  );
  return `# The platform at rest

Generated ${r.generated_at} by \`${r.command}\`. Each topology is started as a user starts it, in a child process: **embedded** is \`npm start\` (\`node platform/dist/embedded.js\`: every component in one process, PGlite, in-memory queues); **mesh** is \`npm run mesh\` (\`node platform/dist/mesh-main.js\`: a supervisor and each component its own process, the OpenTelemetry preload on, on a fresh PostgreSQL database and Redis); **anchor** is the monolith anchor (\`bench/monolith-anchor\`, or \`ANCHOR_DIR\`) serving (one express process on PostgreSQL and Redis) and **bare express** its hello, both for reference. Once it serves, ${warmRequests} authenticated reads warm it, it settles for ${r.settle_seconds} s, then each process is measured over ${r.idle_seconds} s with nothing to do: its CPU time (utime + stime of \`/proc/<pid>/stat\`, all its threads) as a share of one core, and its wake-ups (voluntary context switches of its threads, \`/proc/<pid>/task/*/status\`): a process that polls wakes up often.

| topology | process | % of one core at rest | wake-ups/s | goal ≤ ${r.goal_percent_of_one_core} % |
|---|---|---:|---:|---|
${processRows.join("\n")}

${storeRows.length > 0 ? storesMarkdown(storeRows) : ""}| topology | the machine (every process) | commits/s of the database at rest | load average at the end |
|---|---:|---:|---|
${machineRows.join("\n")}

Commits are \`pg_stat_database.xact_commit\` of the mesh's database (read from another database, so the reading is not counted); PostgreSQL counts a backend's commits when it flushes its statistics (within 10 s), so the count lags the window by as much at both ends.

## The first request after the rest

After the measured rest, and after each of the rests that follow it (${r.rest_cycles} rests of ${r.idle_seconds} s in all), one authenticated \`GET /v1/api/agents?limit=1\` (the access token taken before), then ${warmRequests} more one after the other; ms until the body is in. Every read opens a connection of its own, so the first and the warm ones pay the same. "Added" is the first read less the median of the warm ones after it; the table gives the median over the rests, and each rest's. The anchor (the same read served by a hand-written process on PostgreSQL and Redis; its pool closes idle connections after 10 s, so its first read after a rest also reconnects) and bare express (a constant, no store) are rested and read the same way on the same machine: what a rest costs any process here (caches and page tables gone cold, the peers' too), against which the platform's own share is read.

| topology | first after a rest, ms | warm median, ms | added, ms | added, of the warm median | added after each rest, ms |
|---|---:|---:|---:|---:|---|
${firstRows.join("\n")}

| machine | |
|---|---|
| cpu | ${r.machine.cpu} |
| cores | ${r.machine.cores} |
| node | ${r.machine.node} |
`;
}

process.exit(0);
