import { randomBytes } from "node:crypto";
import {
  callUnary,
  createBullmqBus,
  createClient,
  createPool,
  newId,
  type Logger,
} from "@switchboard/kit";
import { createRealTestDatabase } from "@switchboard/kit/testing";
import { usage } from "@switchboard/proto";
import {
  createRecordSigner,
  createUsageKeyStore,
  migrateUsage,
  startUsage,
  type RecordDraft,
} from "@switchboard/usage";
import type { IngestResult } from "./bench-stats.js";

const secret = "usage-bench-signing-key-secret-0123456789";

const gatewayRecord = (i: number): usage.RequestRecord => ({
  requestId: newId("req"),
  occurredAt: new Date().toISOString(),
  accountId: `acct_bench_${i % 50}`,
  principal: "cli_bench",
  method: "GET",
  route: "/api/numbers/search",
  status: 200,
  latencyMs: 2.5,
  replayed: false,
});

/**
 * Starts the usage service, then times handing it `records` gateway records as the gateways'
 * record relays do: AppendRequestRecords batches of `perJob`, `concurrency` relays at once
 * (default 4), until every record is signed and committed.
 */
export async function ingestThroughput(options: {
  redisUrl: string;
  logger: Logger;
  records: number;
  perJob: number;
  /** Batches in flight at once (gateway replicas relaying). */
  concurrency?: number;
}): Promise<IngestResult> {
  const { records, perJob, logger } = options;
  const database = await createRealTestDatabase("bench_usage");
  const pool = createPool(database.url, { max: 10, name: "usage-bench" });
  const prefix = `sbbench_${randomBytes(4).toString("hex")}`;
  const bus = createBullmqBus({ redisUrl: options.redisUrl, prefix, logger });
  const running = await startUsage({ pool, bus, port: 0, logger, signingKeySecret: secret });
  const client = createClient(usage.UsageServiceClient, `127.0.0.1:${running.port}`);
  try {
    const batches: usage.RequestRecord[][] = [];
    for (let i = 0; i < records; i += perJob) {
      batches.push(
        Array.from({ length: Math.min(perJob, records - i) }, (_, k) => gatewayRecord(i + k)),
      );
    }
    const started = process.hrtime.bigint();
    const relay = async () => {
      for (let batch = batches.shift(); batch; batch = batches.shift()) {
        await callUnary<usage.AppendRequestRecordsRequest, usage.AppendRequestRecordsResponse>(
          "usage",
          client,
          client.appendRequestRecords,
          { records: batch },
          { deadlineMs: 60_000, actingFor: { accountId: undefined, principal: "gateway" } },
        );
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 4 }, relay));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { rows } = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM usage.records",
    );
    if (rows[0]?.n !== records) throw new Error(`expected ${records} records, found ${rows[0]?.n}`);
    return { records_per_job: perJob, records, seconds, records_per_second: records / seconds };
  } finally {
    client.close();
    await running.stop();
    await bus.close();
    await pool.end();
    await database.drop();
  }
}

/** Canonicalisation + Ed25519 alone (`threads` signing threads; 0 = in line): records/s. */
export async function signingRate(count: number, threads: number): Promise<number> {
  const database = await createRealTestDatabase("bench_usage_keys");
  const pool = createPool(database.url, { max: 2, name: "usage-bench" });
  try {
    await migrateUsage(pool);
    const signer = createRecordSigner(createUsageKeyStore({ pool, secret }), { threads });
    const draft = (i: number): RecordDraft => ({
      kind: "api.request",
      occurred_at: new Date().toISOString(),
      account_id: "acct_bench",
      principal: "cli_bench",
      request_id: newId("req"),
      resource_id: null,
      method: "GET",
      route: "/api/numbers/search",
      status: 200,
      replayed: false,
      quantity: 1,
      unit: "request",
      attributes: { latency_ms: i / 1000 },
      eventId: null,
    });
    await signer.signRecords([draft(0)]);
    const drafts = Array.from({ length: count }, (_, i) => draft(i));
    const started = process.hrtime.bigint();
    // Two batches in flight, as the ingest batcher keeps them.
    const batches: Promise<unknown>[] = [];
    for (let i = 0; i < drafts.length; i += 500) {
      batches.push(signer.signRecords(drafts.slice(i, i + 500)));
      if (batches.length >= 2) await batches.shift();
    }
    await Promise.all(batches);
    const rate = count / (Number(process.hrtime.bigint() - started) / 1e9);
    await signer.close();
    return rate;
  } finally {
    await pool.end();
    await database.drop();
  }
}
