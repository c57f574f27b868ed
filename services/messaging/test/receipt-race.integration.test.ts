import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool, PoolClient } from "@switchboard/kit";
import type { MessagingContext } from "../src/context.js";
import { claimMessage } from "../src/delivery/claim.js";
import { applyReceipt, UnknownReceiptError } from "../src/delivery/receipts.js";
import { transition } from "../src/messages/transitions.js";
import {
  createTemplate,
  eventsOf,
  ownNumber,
  sandboxNumber,
  sendWithConsent,
} from "@switchboard/test-support/fixtures/messages";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";

/**
 * The sandbox network sends a receipt shortly after it takes a message, so the receipt often
 * reaches the database while the submit worker is still committing `sent`. However the two
 * interleave, the receipt must land: applied at once, or refused so the carrier retries it.
 */
describe("a receipt racing the `sent` commit (PostgreSQL + Redis)", () => {
  let p: MessagingPlatform;
  let token: string;
  let sender: string;
  let template: { id: string };
  let ctx: MessagingContext;

  beforeAll(async () => {
    p = await startMessagingPlatform();
    ctx = p.messaging.deliveryContext;
    token = await p.token();
    sender = await ownNumber(p, token, ["sms"]);
    template = await createTemplate(p, token, "Order {{n}} shipped");
    // The pipeline never submits this sender's messages on its own: the test drives each try.
    await p.pool.query(
      "INSERT INTO messaging.sender_submits (sender, tat) VALUES ($1, now() + interval '1 hour')",
      [sender],
    );
  });
  afterAll(async () => p?.stop());

  /** A message claimed for its first try (`sending`), as the submit worker holds it. */
  async function sendingMessage(): Promise<string> {
    const { id } = await sendWithConsent(p, token, {
      to: sandboxNumber(0),
      from: sender,
      templateId: template.id,
    });
    await waitForTurnBooked(id);
    await p.pool.query("UPDATE messaging.messages SET scheduled_at = now() WHERE id = $1", [id]);
    expect((await claimMessage(ctx, id)).kind).toBe("claimed");
    return id;
  }

  async function waitForTurnBooked(id: string): Promise<void> {
    for (let i = 0; i < 400; i++) {
      const { rows } = await p.pool.query(
        "SELECT 1 FROM messaging.messages WHERE id = $1 AND scheduled_at IS NOT NULL",
        [id],
      );
      if (rows.length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`message ${id} was never dispatched`);
  }

  /** The submit worker's transaction recording `sent`, left open until `commit`. */
  async function openSentTransaction(id: string, providerMessageId: string) {
    const client = await p.pool.connect();
    await client.query("BEGIN");
    await transition(client, id, "sent", {
      provider_message_id: providerMessageId,
      sent_at: "now",
      lease_until: null,
    });
    let committed: Promise<void> | undefined;
    return {
      commit: () =>
        (committed ??= client.query("COMMIT").then(
          () => client.release(),
          (error: unknown) => {
            client.release();
            throw error;
          },
        )),
    };
  }

  /** `pool`, whose transactions run `between` right after their `statement`-th statement. */
  function interleaving(pool: Pool, statement: number, between: () => Promise<void>): Pool {
    const connect = async (): Promise<PoolClient> => {
      const client = await pool.connect();
      let statements = 0;
      return new Proxy(client, {
        get(target, key) {
          if (key !== "query") {
            const value: unknown = Reflect.get(target, key);
            return typeof value === "function" ? value.bind(target) : value;
          }
          return async (...args: Parameters<PoolClient["query"]>) => {
            const result: unknown = await (target.query as (...a: unknown[]) => unknown)(...args);
            if (args[0] !== "BEGIN" && ++statements === statement) await between();
            return result;
          };
        },
      });
    };
    return { connect } as unknown as Pool;
  }

  const delivered = (providerMessageId: string) => ({
    providerMessageId,
    status: "delivered" as const,
    occurredAt: new Date(),
  });

  async function statusOf(id: string): Promise<string | undefined> {
    const { rows } = await p.pool.query<{ status: string }>(
      "SELECT status FROM messaging.messages WHERE id = $1",
      [id],
    );
    return rows[0]?.status;
  }

  it.each([1, 2, 3])(
    "the `sent` commit lands right after the receipt's statement %i: the receipt is applied",
    async (statement) => {
      const id = await sendingMessage();
      const providerMessageId = `sbx-${randomUUID()}`;
      const sent = await openSentTransaction(id, providerMessageId);
      const racing = { ...ctx, pool: interleaving(ctx.pool, statement, sent.commit) };
      const refused = await applyReceipt(racing, delivered(providerMessageId)).then(
        () => false,
        (error: unknown) => {
          if (error instanceof UnknownReceiptError) return true;
          throw error;
        },
      );
      // Had the receipt's transaction fewer statements, the commit lands once it has ended; in
      // any case before the carrier's retry, which comes after a backoff.
      await sent.commit();
      if (refused) await applyReceipt(ctx, delivered(providerMessageId));
      expect(await statusOf(id)).toBe("delivered");
      const types = (await eventsOf(p, id)).map((e) => e.type);
      expect(types.filter((type) => type === "message.delivered")).toHaveLength(1);
    },
  );

  it("a receipt that arrives before the `sent` commit is refused for a retry, then lands", async () => {
    const id = await sendingMessage();
    const providerMessageId = `sbx-${randomUUID()}`;
    const sent = await openSentTransaction(id, providerMessageId);
    const receipt = delivered(providerMessageId);
    await expect(applyReceipt(ctx, receipt)).rejects.toBeInstanceOf(UnknownReceiptError);
    expect(await statusOf(id)).toBe("sending");
    await sent.commit();
    await applyReceipt(ctx, receipt);
    expect(await statusOf(id)).toBe("delivered");
  });
});
