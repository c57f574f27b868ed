import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import { createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase } from "@switchboard/kit/testing";
import { countRoundTrips } from "../call-control/pg-round-trips.js";
import { isCarrier, networks, type Carrier } from "./networks.js";
import { observe } from "./observer.js";
import { phases } from "./phases.js";
import { markdown, summaryTable, type CarrierRun, type MessagesReport } from "./report.js";
import { observerName, settings } from "./settings.js";
import {
  accountId,
  clearRedis,
  prepareSends,
  startBenchPlatform,
  type BenchPlatform,
} from "./setup.js";

/**
 * `npm run bench:messages`: POST /api/messages/send through the gateway and each message's whole
 * life after it (the dispatcher, the submit to the carrier, the delivery receipt), for the
 * sandbox carrier and for the smpp carrier against the test SMSC.
 *
 * Per carrier, one after the other, each on a fresh PostgreSQL database with the same counts:
 * the whole platform (startPlatform: every component, as the embedded mode and the tests start
 * it) and the real Redis (BullMQ), the gateway's policies on (setup.ts). A load generator in a
 * worker thread (load-worker.ts) keeps a fixed number of requests in flight; then the benchmark
 * waits until the carrier has taken and delivered every accepted message and checks that none
 * was lost or sent twice (phases.ts, drain.ts, checks.ts). cpu-ms per message is the machine's
 * CPU time from the start of the load until the last delivery (/proc/stat, as
 * bench/floor-bench.mjs measures it) less the load generator's thread and less the SMSC, which
 * runs in a child process (smsc-process.ts): it is the network, not the platform (networks.ts).
 * Settings from the environment (settings.ts: BENCH_CARRIERS, BENCH_REQUESTS, …).
 * Results: bench/results/messages.md and messages.json; `--render` writes messages.md again
 * from messages.json (after a change to the report's wording).
 */
const results = new URL("../../results/", import.meta.url);
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** Every statement the platform's pg clients send in this process (as bench:calls counts them). */
const roundTrips = countRoundTrips([observerName]);

async function main() {
  const shared: { postgres?: string } = {};
  const carriers: CarrierRun[] = [];
  for (const carrier of settings.carriers) {
    if (!isCarrier(carrier)) throw new Error(`unknown messaging carrier ${carrier}`);
    carriers.push(await runCarrier(carrier, shared));
  }
  const report: MessagesReport = {
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
  await writeFile(new URL("messages.json", results), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(new URL("messages.md", results), markdown(report));
  console.log(`\n${summaryTable(report)}`);
}

/**
 * One carrier's run: a fresh database and platform, the account set up, then the phases. The
 * first run reads the server's version into `shared`.
 */
async function runCarrier(carrier: Carrier, shared: { postgres?: string }): Promise<CarrierRun> {
  const network = await networks[carrier]();
  const database = await createRealTestDatabase("bench_messages");
  const busPrefix = `sbbench${randomBytes(4).toString("hex")}`;
  console.log(
    `bench:messages — ${carrier}: starting the platform on ${database.url.replace(/\/\/[^@]*@/, "//")}`,
  );
  let running: BenchPlatform | undefined;
  let observer: Pool | undefined;
  try {
    running = await startBenchPlatform({
      databaseUrl: database.url,
      redisUrl,
      busPrefix,
      network,
    });
    const { platform, url, token } = running;
    observer = createPool(database.url, { max: 2, name: observerName });
    const db = observe(observer);
    shared.postgres ??= await db.postgresVersion();
    const common = {
      ...(await prepareSends(url, token)),
      url,
      token,
      concurrency: settings.concurrency,
      mode: "gateway" as const,
      accountId,
      grpcAddress: `127.0.0.1:${platform.services.messaging!.port}`,
    };
    const row = await phases(carrier, network, db, common, roundTrips.snapshot);
    return { carrier, network: network.where, ...row };
  } finally {
    await observer?.end();
    await running?.platform.stop();
    await database.drop();
    await network.stop();
    await clearRedis(redisUrl, busPrefix);
  }
}

if (process.argv.includes("--render")) {
  const report = JSON.parse(
    await readFile(new URL("messages.json", results), "utf8"),
  ) as MessagesReport;
  await writeFile(new URL("messages.md", results), markdown(report));
} else {
  await main();
}
