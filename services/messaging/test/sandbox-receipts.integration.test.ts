import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@switchboard/kit";
import type { DeliveryReceipt, InboundOutcome } from "../src/carrier/carrier.js";
import { createSandboxReceipts } from "../src/carrier/sandbox-receipts.js";
import type { SandboxCarrier } from "../src/carrier/sandbox-carrier.js";
import {
  ended,
  sandboxNumber,
  sendWithConsent,
  startSender,
  waitForMessage,
  type Sender,
} from "@switchboard/test-support/fixtures/messages";
import {
  startMessagingPlatform,
  testRedisUrl,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";

/**
 * The sandbox network's receipts wait in its rows (`messaging.sandbox_network`), scheduled by
 * the statement that takes the message, and a runner sends them in batches when they fall
 * due: no job on the bus per receipt, nothing lost across a restart, each sent once however
 * many replicas run, a receipt that overtakes `sent` retried until it lands.
 */
describe("the sandbox network's receipts, from its rows (PostgreSQL + Redis)", () => {
  let p: MessagingPlatform;
  let sender: Sender;
  const logger = createLogger("sandbox-receipts-test");
  /** The runners here send receipts only. */
  const noInbound = (): Promise<InboundOutcome> =>
    Promise.reject(new Error("the sandbox receipts never send an inbound message"));

  beforeAll(async () => {
    p = await startMessagingPlatform();
    sender = await startSender(p, "Order {{n}} shipped");
  });
  afterAll(async () => p?.stop());

  const carrier = () => p.messaging.context.carrier as SandboxCarrier;

  /** A row of the network, as a submit leaves it, with its receipt due `dueInMs` from now. */
  async function networkRow(options: { to?: string; channel?: string; dueInMs?: number } = {}) {
    const ref = `msg_${randomUUID()}`;
    const providerId = `sbx-${randomUUID()}`;
    await p.pool.query(
      `INSERT INTO messaging.sandbox_network
         (client_ref, provider_message_id, channel, to_number, from_number, segments,
          receipt_status, receipt_due_at)
       VALUES ($1, $2, $3, $4, $5, 1, 'delivered', now() + make_interval(secs => $6 / 1000.0))`,
      [
        ref,
        providerId,
        options.channel ?? "sms",
        options.to ?? sandboxNumber(0),
        sender.from,
        options.dueInMs ?? 0,
      ],
    );
    return { ref, providerId };
  }

  async function receiptColumns(ref: string) {
    const { rows } = await p.pool.query<{
      receipt_status: string | null;
      receipt_due_at: Date | null;
      receipt_tries: number;
    }>(
      `SELECT receipt_status, receipt_due_at, receipt_tries
         FROM messaging.sandbox_network WHERE client_ref = $1`,
      [ref],
    );
    return rows[0];
  }

  it("delivers a message with no job on the bus for its receipt", async () => {
    const accepted = await sendWithConsent(p, sender.token, {
      to: sandboxNumber(0),
      from: sender.from,
      templateId: sender.template.id,
    });
    const message = await waitForMessage(p, sender.token, accepted.id, ended);
    expect(message.status).toBe("delivered");
    const redis = new Redis(testRedisUrl());
    try {
      const keys = await redis.keys(`${p.test.busPrefix}*sandbox*`);
      expect(keys).toEqual([]);
    } finally {
      redis.disconnect();
    }
    expect(await receiptColumns(accepted.id)).toEqual({
      receipt_status: null,
      receipt_due_at: null,
      receipt_tries: 0,
    });
  });

  it("sends an RCS message's read receipt one delay after its delivery", async () => {
    const accepted = await sendWithConsent(p, sender.token, {
      to: sandboxNumber(0),
      from: sender.from,
      templateId: sender.template.id,
      extra: { channel: "rcs" },
    });
    const message = await waitForMessage(p, sender.token, accepted.id, (m) => m.status === "read");
    expect(message.status).toBe("read");
    expect((await receiptColumns(accepted.id))?.receipt_due_at).toBeNull();
  });

  it("asks again for an overdue receipt (the sweeper's requestReceipt)", async () => {
    const accepted = await sendWithConsent(p, sender.token, {
      to: sandboxNumber(0),
      from: sender.from,
      templateId: sender.template.id,
    });
    await waitForMessage(p, sender.token, accepted.id, ended);
    const { rows } = await p.pool.query<{ provider_message_id: string }>(
      "SELECT provider_message_id FROM messaging.sandbox_network WHERE client_ref = $1",
      [accepted.id],
    );
    const providerMessageId = rows[0]!.provider_message_id;
    await carrier().requestReceipt({ providerMessageId, to: sandboxNumber(0) });
    expect((await receiptColumns(accepted.id))?.receipt_status).toBe("delivered");
    await expect
      .poll(async () => (await receiptColumns(accepted.id))?.receipt_due_at, { timeout: 5_000 })
      .toBeNull();
  });
  describe("with the platform's own runner stopped (these rows name no message)", () => {
    beforeAll(async () => carrier().stop());

    it("sends each due receipt once however many runners take them at once", async () => {
      const rows = await Promise.all(Array.from({ length: 60 }, () => networkRow()));
      const ours = new Set(rows.map((row) => row.providerId));
      const received: string[] = [];
      const events = {
        receipt: async (receipt: DeliveryReceipt) => {
          if (ours.has(receipt.providerMessageId)) received.push(receipt.providerMessageId);
        },
        inbound: noInbound,
      };
      const runners = Array.from({ length: 3 }, () =>
        createSandboxReceipts({ pool: p.pool, logger, delayMs: 40, concurrency: 4, batchSize: 7 }),
      );
      try {
        for (const runner of runners) runner.start(events);
        await Promise.all(runners.map((runner) => runner.drainDue()));
        await expect
          .poll(() => received.length, { timeout: 5_000 })
          .toBeGreaterThanOrEqual(ours.size);
      } finally {
        await Promise.all(runners.map((runner) => runner.stop()));
      }
      expect(received.sort()).toEqual([...ours].sort());
      for (const row of rows) expect((await receiptColumns(row.ref))?.receipt_due_at).toBeNull();
    });

    it("retries a receipt that overtakes its message's `sent` until it lands", async () => {
      const { ref, providerId } = await networkRow();
      let refusals = 0;
      const landed: string[] = [];
      const runner = createSandboxReceipts({ pool: p.pool, logger, delayMs: 40, concurrency: 2 });
      runner.start({
        receipt: async (receipt) => {
          if (receipt.providerMessageId !== providerId) return;
          if (refusals < 2) {
            refusals += 1;
            throw new Error("no message has this provider id yet");
          }
          landed.push(receipt.providerMessageId);
        },
        inbound: noInbound,
      });
      try {
        await expect.poll(() => landed, { timeout: 10_000 }).toEqual([providerId]);
      } finally {
        await runner.stop();
      }
      expect(refusals).toBe(2);
      expect(await receiptColumns(ref)).toEqual({
        receipt_status: null,
        receipt_due_at: null,
        receipt_tries: 0,
      });
    });

    it("sends a receipt that fell due while no runner ran (a restart)", async () => {
      const { ref, providerId } = await networkRow({ dueInMs: -60_000 });
      const received: string[] = [];
      const runner = createSandboxReceipts({ pool: p.pool, logger, delayMs: 40, concurrency: 2 });
      runner.start({
        receipt: async (receipt) => {
          if (receipt.providerMessageId === providerId) received.push(receipt.providerMessageId);
        },
        inbound: noInbound,
      });
      try {
        await expect.poll(() => received, { timeout: 5_000 }).toEqual([providerId]);
      } finally {
        await runner.stop();
      }
      expect((await receiptColumns(ref))?.receipt_due_at).toBeNull();
    });
  });
});
