import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BullmqBus, Job } from "@switchboard/kit";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import {
  ended,
  eventsOf,
  json,
  ownNumber,
  sandboxNumber,
  sendWithConsent,
  startSender,
  waitForMessage,
  type MessageJson,
} from "@switchboard/test-support/fixtures/messages";
import { claimMessage } from "@switchboard/messaging/delivery/claim";
import { submitOnce } from "@switchboard/messaging/delivery/submit-worker";
import { sweepMessages } from "@switchboard/messaging/delivery/sweeper";
import { SUBMIT_QUEUE, type SubmitJob } from "@switchboard/messaging/delivery/submit-queue";

/** The queue and the carrier: retries with backoff, never a second send, TTL, recovery. */
describe("delivery through the queue (PostgreSQL + Redis)", () => {
  let p: MessagingPlatform;
  let token: string;
  let from: string;
  let template: { id: string };

  beforeAll(async () => {
    // Ten tries (backoff 30 ms doubling to 300 ms, ~2 s in all) outlast a 1 s TTL.
    p = await startMessagingPlatform({ env: { MESSAGING_SEND_ATTEMPTS: "10" } });
    ({ token, from, template } = await startSender(p, "Order {{n}} shipped"));
  });
  afterAll(async () => p?.stop());

  const sendTo = (to: string, extra: Record<string, unknown> = {}, sender = from) =>
    sendWithConsent(p, token, { to, from: sender, templateId: template.id, extra });

  async function network(id: string) {
    const { rows } = await p.pool.query<{ submit_calls: number; provider_message_id: string }>(
      "SELECT submit_calls, provider_message_id FROM messaging.sandbox_network WHERE client_ref = $1",
      [id],
    );
    return rows;
  }

  async function attempts(id: string) {
    const { rows } = await p.pool.query<{ attempt: number; outcome: string }>(
      "SELECT attempt, outcome FROM messaging.send_attempts WHERE message_id = $1 ORDER BY attempt",
      [id],
    );
    return rows.map((r) => [r.attempt, r.outcome]);
  }

  const sentEvents = async (id: string) =>
    (await eventsOf(p, id)).filter((e) => e.type === "message.sent");

  /** Holds every new message of `sender` in the queue by pushing its pacing slot an hour out. */
  const holdSender = (sender: string) =>
    p.pool.query(
      `INSERT INTO messaging.sender_submits (sender, tat) VALUES ($1, now() + interval '1 hour')
       ON CONFLICT (sender) DO UPDATE SET tat = now() + interval '1 hour'`,
      [sender],
    );

  /** Makes the messages' booked turns due now (for tries driven by the test itself). */
  const releaseTurns = (ids: string[]) =>
    p.pool.query("UPDATE messaging.messages SET scheduled_at = now() WHERE id = ANY($1)", [ids]);

  const fakeJob = (messageId: string, attempt = 1): Job<SubmitJob> => ({
    id: `test.${messageId}`,
    queue: SUBMIT_QUEUE,
    name: "message.submit",
    data: { messageId },
    attempt,
    maxAttempts: 10,
  });

  it("the carrier's answer is lost once: the retry is recognised, the message is sent once and delivered", async () => {
    const accepted = await sendTo(sandboxNumber(5));
    const done = await waitForMessage(p, token, accepted.id, ended);
    expect(done.status).toBe("delivered");
    const rows = await network(accepted.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.submit_calls).toBe(2);
    expect(await attempts(accepted.id)).toEqual([
      [1, "unknown"],
      [2, "accepted"],
    ]);
    expect(await sentEvents(accepted.id)).toHaveLength(1);
  });

  it("the carrier throttles once: retried with backoff, then sent once", async () => {
    const accepted = await sendTo(sandboxNumber(6));
    expect((await waitForMessage(p, token, accepted.id, ended)).status).toBe("delivered");
    expect(await network(accepted.id)).toHaveLength(1);
    expect((await network(accepted.id))[0]?.submit_calls).toBe(1);
    expect(await attempts(accepted.id)).toEqual([
      [1, "error"],
      [2, "accepted"],
    ]);
  });

  it("a congested carrier: the message fails when its tries run out, or expires at its TTL first", async () => {
    const exhausted = await sendTo(sandboxNumber(4));
    const failed = await waitForMessage(p, token, exhausted.id, ended);
    expect(failed).toMatchObject({
      status: "failed",
      error_code: "carrier-retries-exhausted",
      sent_at: null,
    });
    expect((await attempts(exhausted.id)).map(([, outcome]) => outcome)).toEqual(
      Array(10).fill("error"),
    );
    expect(await network(exhausted.id)).toHaveLength(0);

    const slow = await startMessagingTtlCase();
    expect(slow).toMatchObject({ status: "expired", error_code: "ttl-expired", sent_at: null });
    const types = (await eventsOf(p, slow.id)).map((e) => e.type);
    expect(types).toEqual(["message.queued", "message.sending", "message.expired"]);
  });

  /** TTL 1 s against a carrier that keeps refusing: the retry after the TTL expires it. */
  async function startMessagingTtlCase() {
    const accepted = await sendTo(sandboxNumber(4), { ttl_seconds: 1 });
    expect(accepted.expires_at).not.toBeNull();
    return waitForMessage(p, token, accepted.id, ended, 20_000);
  }

  it("twenty concurrent tries of one message: one claim, one submit, one sent", async () => {
    const sender = await ownNumber(p, token, ["sms"], [], 2);
    await holdSender(sender);
    const accepted = await sendTo(sandboxNumber(0), {}, sender);
    await waitForScheduled([accepted.id]);
    await releaseTurns([accepted.id]);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => submitOnce(p.messaging.context, fakeJob(accepted.id))),
    );
    expect(results.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(1);
    const rows = await network(accepted.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.submit_calls).toBe(1);
    expect(await attempts(accepted.id)).toEqual([[1, "accepted"]]);
    expect(await sentEvents(accepted.id)).toHaveLength(1);
    expect((await waitForMessage(p, token, accepted.id, ended)).status).toBe("delivered");
  });

  it("recovers a message whose job was lost, and one whose worker died mid-try, without a second send", async () => {
    const sender = await ownNumber(p, token, ["sms"], [], 3);
    await holdSender(sender);
    const lost = await sendTo(sandboxNumber(0), {}, sender);
    const crashed = await sendTo(sandboxNumber(0), {}, sender);
    await waitForScheduled([lost.id, crashed.id]);
    // The queue loses every submit job (e.g. Redis was flushed).
    await (p.platform.bus as BullmqBus).obliterate(SUBMIT_QUEUE);
    // A worker claimed `crashed`, handed it to the network, and died before recording it.
    await releaseTurns([crashed.id]);
    const claim = await claimMessage(p.messaging.context, crashed.id);
    expect(claim.kind).toBe("claimed");
    if (claim.kind !== "claimed") return;
    await p.messaging.context.carrier.submit({
      clientRef: crashed.id,
      attempt: 1,
      channel: "sms",
      from: claim.row.from_number,
      to: claim.row.to_number,
      body: claim.row.body,
      mediaUrls: [],
      encoding: "GSM-7",
      segments: 1,
      expiresAt: null,
    });
    // Both are overdue by more than MESSAGING_REDISPATCH_AFTER_MS.
    await p.pool.query(
      `UPDATE messaging.messages SET scheduled_at = now() - interval '5 minutes',
              lease_until = CASE WHEN status = 'sending' THEN now() - interval '5 minutes' END
        WHERE id = ANY($1)`,
      [[lost.id, crashed.id]],
    );
    const swept = await sweepMessages(p.messaging.context, p.platform.bus);
    expect(swept.redispatched).toBe(2);
    for (const id of [lost.id, crashed.id]) {
      expect((await waitForMessage(p, token, id, ended)).status).toBe("delivered");
      expect(await network(id)).toHaveLength(1);
      expect(await sentEvents(id)).toHaveLength(1);
    }
    expect((await network(crashed.id))[0]?.submit_calls).toBe(2);
    expect(await attempts(crashed.id)).toEqual([
      [1, null],
      [2, "accepted"],
    ]);
  });

  it("asks the carrier again for a receipt that never came", async () => {
    const sender = await ownNumber(p, token, ["sms"], [], 6);
    await holdSender(sender);
    const accepted = await sendTo(sandboxNumber(0), {}, sender);
    await waitForScheduled([accepted.id]);
    await releaseTurns([accepted.id]);
    // The network takes the message but its receipt never comes (due an hour on).
    const carrier = p.messaging.deliveryContext.carrier as unknown as {
      options: { receiptDelayMs: number };
    };
    const delay = carrier.options.receiptDelayMs;
    carrier.options.receiptDelayMs = 3_600_000;
    try {
      await submitOnce(p.messaging.deliveryContext, fakeJob(accepted.id));
    } finally {
      carrier.options.receiptDelayMs = delay;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(
      (await json<MessageJson>(await p.request(`/v1/api/messages/${accepted.id}`, { token })))
        .status,
    ).toBe("sent");
    await p.pool.query(
      "UPDATE messaging.messages SET sent_at = now() - interval '1 hour' WHERE id = $1",
      [accepted.id],
    );
    const swept = await sweepMessages(p.messaging.context, p.platform.bus);
    expect(swept.receiptsRequested).toBe(1);
    expect((await waitForMessage(p, token, accepted.id, ended)).status).toBe("delivered");
    expect(await network(accepted.id)).toHaveLength(1);
  });

  it("the sweeper expires a message held past its TTL", async () => {
    const sender = await ownNumber(p, token, ["sms"], [], 4);
    await holdSender(sender);
    const accepted = await sendTo(sandboxNumber(0), { ttl_seconds: 1 }, sender);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const swept = await sweepMessages(p.messaging.context, p.platform.bus);
    expect(swept.expired).toBeGreaterThanOrEqual(1);
    const done = await json<MessageJson>(
      await p.request(`/v1/api/messages/${accepted.id}`, { token }),
    );
    expect(done).toMatchObject({ status: "expired", error_code: "ttl-expired" });
  });

  it("paces a burst from one sender at MESSAGING_SENDER_RATE", async () => {
    const sender = await ownNumber(p, token, ["sms"], [], 5);
    await p.pool.query("DELETE FROM messaging.sender_submits WHERE sender = $1", [sender]);
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => sendTo(sandboxNumber(0), {}, sender)),
    );
    await waitForScheduled(burst.map((m) => m.id));
    const { rows } = await p.pool.query<{ scheduled_at: Date }>(
      "SELECT scheduled_at FROM messaging.messages WHERE id = ANY($1) ORDER BY scheduled_at",
      [burst.map((m) => m.id)],
    );
    // 500 per second: one slot every 2 ms, none shared.
    const gaps = rows
      .slice(1)
      .map((row, i) => row.scheduled_at.getTime() - rows[i]!.scheduled_at.getTime());
    expect(gaps.every((gap) => gap >= 2)).toBe(true);
    for (const m of burst)
      expect((await waitForMessage(p, token, m.id, ended)).status).toBe("delivered");
  });

  it("a burst waits for its turns: none is submitted before the sender's pace allows", async () => {
    const sender = await ownNumber(p, token, ["sms"], [], 7);
    // The sender's next turn is 800 ms away (e.g. a backlog ahead of it).
    const { rows: booked } = await p.pool.query<{ tat: Date }>(
      `INSERT INTO messaging.sender_submits (sender, tat) VALUES ($1, now() + interval '800 milliseconds')
       ON CONFLICT (sender) DO UPDATE SET tat = EXCLUDED.tat RETURNING tat`,
      [sender],
    );
    const burst = await Promise.all(
      Array.from({ length: 6 }, () => sendTo(sandboxNumber(0), {}, sender)),
    );
    for (const m of burst)
      expect((await waitForMessage(p, token, m.id, ended)).status).toBe("delivered");
    // None reached the network before that turn (less the claim's 20 ms tolerance), by the
    // database's clock: the burst may take longer than 800 ms to send on a loaded machine.
    const early = await p.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM messaging.sandbox_network
        WHERE client_ref = ANY($1) AND accepted_at < $2::timestamptz - interval '20 milliseconds'`,
      [burst.map((m) => m.id), booked[0]!.tat],
    );
    expect(early.rows[0]?.n).toBe(0);
    const { rows } = await p.pool.query<{ at: Date; turn: Date }>(
      `SELECT n.accepted_at AS at, m.scheduled_at AS turn FROM messaging.sandbox_network n
         JOIN messaging.messages m ON m.id = n.client_ref WHERE m.id = ANY($1) ORDER BY m.scheduled_at`,
      [burst.map((m) => m.id)],
    );
    // Each went at (or, within the 20 ms tolerance, just before) its own turn, the turns one
    // interval (2 ms at 500/s) apart from the first free one.
    expect(rows[0]!.turn.getTime()).toBeGreaterThanOrEqual(booked[0]!.tat.getTime());
    expect(rows.every((row) => row.at.getTime() >= row.turn.getTime() - 20)).toBe(true);
    const gaps = rows.slice(1).map((row, i) => row.turn.getTime() - rows[i]!.turn.getTime());
    expect(gaps.every((gap) => gap >= 2)).toBe(true);
  });

  async function waitForScheduled(ids: string[]) {
    for (let i = 0; i < 200; i++) {
      const { rows } = await p.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM messaging.messages WHERE id = ANY($1) AND scheduled_at IS NOT NULL",
        [ids],
      );
      if (rows[0]?.n === ids.length) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error("messages were not dispatched");
  }
});
