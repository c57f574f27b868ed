import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { peakInWindow, startTestSmsc, type TestSmsc } from "@switchboard/test-smsc";
import {
  fastMessagingEnv,
  startMessagingPlatform,
  testRedisUrl,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  createTemplate,
  ownNumber,
  send,
} from "@switchboard/test-support/fixtures/messages";
import { handset, smppEnv, smscCredentials } from "@switchboard/test-support/fixtures/smpp";
import { eventually } from "@switchboard/test-support/waiting";

const messagingMain = resolve(import.meta.dirname, "../../services/messaging/dist/main.js");

/**
 * Sends `count` SMS of distinct texts ("<prefix> <i>") from a new number of the account to
 * consenting handsets, `parallel` at once, through the gateway; returns the message ids.
 */
async function sendMany(
  p: MessagingPlatform,
  options: { count: number; prefix: string; parallel: number },
): Promise<string[]> {
  const token = await p.token();
  const from = await ownNumber(p, token, ["sms"]);
  const template = await createTemplate(p, token, "{{text}}", ["sms"]);
  const handsets = Array.from({ length: 20 }, () => handset(0));
  const consents = await Promise.all(handsets.map((to) => createConsent(p, token, to)));
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: options.parallel }, async () => {
      while (next < options.count) {
        const index = next++;
        const response = await send(p, token, {
          channel: "sms",
          to: handsets[index % handsets.length],
          from,
          template_id: template.id,
          variables: { text: `${options.prefix} ${index}` },
          consent_id: consents[index % handsets.length]!.id,
        });
        expect(response.status).toBe(202);
        ids.push(((await response.json()) as { id: string }).id);
      }
    }),
  );
  return ids;
}

/** The most submit_sm one session had unanswered at once, as the SMSC saw them. */
function peakOutstanding(smsc: TestSmsc): number {
  const open = new Map<number, number>();
  let peak = 0;
  for (const pdu of smsc.pdus) {
    if (pdu.command === "submit_sm" && pdu.direction === "in" && !pdu.dropped) {
      open.set(pdu.sessionId, (open.get(pdu.sessionId) ?? 0) + 1);
      peak = Math.max(peak, open.get(pdu.sessionId)!);
    } else if (pdu.command === "submit_sm_resp" && pdu.direction === "out") {
      open.set(pdu.sessionId, (open.get(pdu.sessionId) ?? 1) - 1);
    }
  }
  return peak;
}

/** Waits until every message of `ids` is delivered (or the time is up); the final counts. */
const deliveredAll = (p: MessagingPlatform, ids: string[], timeoutMs: number) =>
  eventually(
    () => statuses(p, ids),
    (counts) => counts.delivered === ids.length,
    timeoutMs,
  );

async function statuses(p: MessagingPlatform, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await p.pool.query<{ status: string; n: number }>(
    "SELECT status, count(*)::int AS n FROM messaging.messages WHERE id = ANY($1) GROUP BY status",
    [ids],
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/** Nothing lost, nothing sent twice, the rate held: the smpp carrier under failure and load. */
describe("the smpp carrier under a lost bind and across replicas (PostgreSQL + Redis)", () => {
  let smsc: TestSmsc | undefined;
  let p: MessagingPlatform | undefined;
  let replica: ChildProcess | undefined;

  afterEach(async () => {
    replica?.kill("SIGTERM");
    await p?.stop();
    await smsc?.stop();
    replica = undefined;
    p = undefined;
    smsc = undefined;
  });
  afterAll(() => replica?.kill("SIGKILL"));

  it("a bind dropped twice mid-burst of 1,000 messages: none reaches the SMSC twice; the ones in flight fail outcome-unknown, the rest are delivered", async () => {
    // Receipts at once: they race the commit of `sent`, and must still be applied.
    smsc = await startTestSmsc({ ...smscCredentials, receiptDelayMs: 0 });
    p = await startMessagingPlatform({ env: smppEnv(smsc, { SMPP_THROUGHPUT: "5000" }) });
    await smsc.waitFor((s) => s.bound() > 0);
    smsc.dropAfterSubmits(250);
    const sending = sendMany(p, {
      count: 1_000,
      prefix: "burst",
      parallel: 16,
    });
    const server = smsc;
    await server.waitFor((s) => s.binds.filter((b) => b.status === 0).length >= 2, 60_000);
    server.dropAfterSubmits(300);
    const ids = await sending;
    const platform = p;
    const final = await eventually(
      () => statuses(platform, ids),
      (counts) => (counts.delivered ?? 0) + (counts.failed ?? 0) === ids.length,
      120_000,
    );
    // A submit the drop lost had left the ESME: it cannot know the SMSC did not take it, so
    // that message fails rather than risk a second send (at most SMPP_WINDOW per drop).
    const { rows: failed } = await platform.pool.query<{ body: string; error_code: string }>(
      "SELECT body, error_code FROM messaging.messages WHERE id = ANY($1) AND status = 'failed'",
      [ids],
    );
    expect(failed.every((row) => row.error_code === "outcome-unknown")).toBe(true);
    expect(failed.length).toBeGreaterThanOrEqual(2);
    expect(failed.length).toBeLessThanOrEqual(20);
    expect(final.delivered).toBe(1_000 - failed.length);
    const texts = server.submits.map((s) => s.text).filter((t) => t.startsWith("burst "));
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts).toHaveLength(1_000 - failed.length);
    expect(texts.filter((text) => failed.some((row) => row.body === text))).toEqual([]);
    expect(new Set(server.submits.map((s) => s.messageId)).size).toBe(server.submits.length);
    expect(server.binds.filter((b) => b.status === 0).length).toBeGreaterThanOrEqual(3);
    expect(server.pdus.some((pdu) => pdu.dropped)).toBe(true);
  }, 180_000);

  it("never has more than SMPP_WINDOW submits unanswered on the bind", async () => {
    // A slow SMSC: each answer takes 50 ms, so 32 sends in progress would pile up without it.
    smsc = await startTestSmsc({ ...smscCredentials, receiptDelayMs: 10, submitDelayMs: 50 });
    p = await startMessagingPlatform({ env: smppEnv(smsc, { SMPP_WINDOW: "4" }) });
    const platform = p;
    const ids = await sendMany(platform, {
      count: 60,
      prefix: "windowed",
      parallel: 16,
    });
    await deliveredAll(platform, ids, 30_000);
    expect(peakOutstanding(smsc)).toBe(4);
  });

  it("while the SMSC refuses binds, messages wait; they go once a bind is accepted", async () => {
    smsc = await startTestSmsc({ ...smscCredentials, receiptDelayMs: 10 });
    smsc.refuseBinds(true);
    p = await startMessagingPlatform({ env: smppEnv(smsc) });
    const platform = p;
    const server = smsc;
    const ids = await sendMany(platform, {
      count: 5,
      prefix: "patient",
      parallel: 5,
    });
    const refused = await server.waitFor((s) => s.binds.length >= 4 && s.binds, 10_000);
    expect(refused.every((bind) => bind.status !== 0)).toBe(true);
    // Backoff with jitter: 50 ms doubling to 200 ms, each try waiting half to all of it.
    const gaps = refused.slice(1).map((bind, i) => bind.at - refused[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(20);
    expect(server.submits).toHaveLength(0);
    expect((await statuses(platform, ids)).delivered).toBeUndefined();
    server.refuseBinds(false);
    const final = await deliveredAll(platform, ids, 20_000);
    expect(final).toEqual({ delivered: 5 });
    expect(server.submits.filter((s) => s.text.startsWith("patient "))).toHaveLength(5);
  });

  it("two messaging processes share SMPP_THROUGHPUT: the SMSC never sees more per second", async () => {
    smsc = await startTestSmsc({ ...smscCredentials, receiptDelayMs: 10 });
    const throughput = 20;
    const env = smppEnv(smsc, { SMPP_THROUGHPUT: String(throughput) });
    p = await startMessagingPlatform({ env });
    const platform = p;
    replica = spawn(process.execPath, [messagingMain], {
      env: {
        ...process.env,
        ...fastMessagingEnv,
        ...env,
        NODE_ENV: "test",
        DATABASE_URL: platform.database.url,
        REDIS_URL: testRedisUrl(),
        REDIS_QUEUE_PREFIX: platform.test.busPrefix,
        INVENTORY_ADDR: `127.0.0.1:${platform.platform.services.inventory!.port}`,
        MESSAGING_GRPC_PORT: "0",
        ADMIN_PORT: "0",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const server = smsc;
    await server.waitFor((s) => s.bound() >= 2, 30_000);
    const ids = await sendMany(platform, {
      count: 80,
      prefix: "paced",
      parallel: 8,
    });
    await deliveredAll(platform, ids, 60_000);
    const paced = server.submits.filter((s) => s.text.startsWith("paced "));
    expect(paced).toHaveLength(80);
    // The SMSC counts arrivals; the carrier paces submits 2 % under the rate (20 ms a second),
    // and a loaded test machine may delay one arrival by more than that (a stalled event loop
    // in a sender or in this process, which stamps the arrivals): the windows here allow 100 ms
    // of delivery jitter, and the whole burst must keep the rate on average.
    const arrivals = paced.map((s) => s.at);
    expect(peakInWindow(arrivals, 900)).toBeLessThanOrEqual(throughput);
    const spanSeconds = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
    expect((paced.length - 1) / spanSeconds).toBeLessThanOrEqual(throughput);
    const bySession = new Set(paced.map((s) => s.sessionId));
    expect(bySession.size).toBe(2);
    expect(server.throttled).toHaveLength(0);
  });
});
