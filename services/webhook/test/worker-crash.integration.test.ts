import { fork, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhook } from "@switchboard/proto";
import { requireTestRedis } from "@switchboard/kit/events/testing";
import { startDeliveryWorkers } from "../src/index.js";
import {
  account,
  logger,
  startHarness,
  testRedisUrl,
  waitFor,
  type Harness,
} from "./support/harness.js";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";

// npm test needs Redis (README): a Redis that is down fails this suite, never skips it.
await requireTestRedis();
const workerMain = fileURLToPath(new URL("../dist/worker-main.js", import.meta.url));

/**
 * A delivery worker process killed (SIGKILL) in the middle of a delivery: BullMQ sees the job
 * stall once the dead worker's lock expires, another worker takes it, and the event is
 * delivered — with the same webhook-id. Needs the compiled worker (npm run build).
 */
describe("a worker killed mid-delivery", () => {
  let h: Harness;
  let receiver: Receiver;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    if (!existsSync(workerMain))
      throw new Error(`${workerMain} is missing: run npm run build first`);
    // The service itself runs no delivery worker: the child process is the only one at first.
    h = await startHarness({ env: { WEBHOOK_DELIVERY_WORKERS: "false" } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    child?.kill("SIGKILL");
    await receiver?.close();
    await h?.stop();
  });

  it("the job is retried after the stall and the event is delivered", async () => {
    child = fork(workerMain, [], {
      env: {
        ...process.env,
        NODE_ENV: "test",
        LOG_LEVEL: "silent",
        DATABASE_URL: h.database.url,
        REDIS_URL: testRedisUrl(),
        REDIS_QUEUE_PREFIX: h.queuePrefix,
        ADMIN_PORT: "0",
        QUEUE_LOCK_DURATION_MS: "1000",
        QUEUE_STALLED_INTERVAL_MS: "500",
        WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*",
        WEBHOOK_RETRY_SCHEDULE: "30s",
        WEBHOOK_TIMEOUT_MS: "10000",
        WEBHOOK_SINK_PORT: "0",
      },
      stdio: "ignore",
    });
    await new Promise<void>((resolve, reject) => {
      child!.once("message", () => resolve());
      child!.once("exit", (code) => reject(new Error(`worker exited early (${code})`)));
    });
    receiver.script("hang"); // the first request never gets an answer
    const { subscription } = (await h.call(h.client.createSubscription, {
      accountId: account,
      url: receiver.url,
      events: ["call.*"],
    })) as webhook.CreateSubscriptionResponse;
    const id = await h.emit({ type: "call.answered", resourceId: "call_crash" });
    await waitFor(() => receiver.received.length === 1, 10_000, "the child's request");

    child.kill("SIGKILL");
    await new Promise((resolve) => child!.once("exit", resolve));
    const rescuer = await startDeliveryWorkers({
      pool: h.pool,
      bus: h.bus,
      port: 0,
      logger,
      settings: h.settings,
    });
    try {
      await waitFor(
        async () =>
          (
            await h.call(h.client.listDeliveries, {
              accountId: account,
              subscriptionId: subscription!.id,
              limit: 10,
              cursor: "",
            })
          ).deliveries[0]?.status === webhook.DeliveryStatus.DELIVERED,
        15_000,
        "the delivery after the stall",
      );
    } finally {
      await rescuer.stop();
    }
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([id, id]);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    const { rows } = await h.pool.query(
      `SELECT attempts, status FROM webhook.deliveries WHERE subscription_id = $1`,
      [subscription!.id],
    );
    // The killed attempt never finished, so it was never recorded: one attempt, delivered.
    expect(rows).toEqual([{ attempts: 1, status: "delivered" }]);
  });
});
