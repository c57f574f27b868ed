import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startTestSmsc, type TestSmsc } from "@switchboard/test-smsc";
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

/** Sends `count` SMS of distinct texts ("<prefix> <i>") to consenting handsets, `parallel` at once. */
async function sendMany(
  p: MessagingPlatform,
  token: string,
  options: { from: string; templateId: string; count: number; prefix: string; parallel: number },
): Promise<string[]> {
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
          from: options.from,
          template_id: options.templateId,
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

  it("a bind dropped twice mid-burst of 1,000 messages: each reaches the SMSC exactly once and ends delivered", async () => {
    // Receipts at once: they race the commit of `sent`, and must still be applied.
    smsc = await startTestSmsc({ ...smscCredentials, receiptDelayMs: 0 });
    p = await startMessagingPlatform({ env: smppEnv(smsc, { SMPP_THROUGHPUT: "5000" }) });
    const token = await p.token();
    const from = await ownNumber(p, token, ["sms"]);
    const template = await createTemplate(p, token, "{{text}}", ["sms"]);
    await smsc.waitFor((s) => s.bound() > 0);
    smsc.dropAfterSubmits(250);
    const sending = sendMany(p, token, {
      from,
      templateId: template.id,
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
      (counts) => counts.delivered === 1_000,
      120_000,
    );
    expect(final).toEqual({ delivered: 1_000 });
    const texts = server.submits.map((s) => s.text).filter((t) => t.startsWith("burst "));
    expect(texts).toHaveLength(1_000);
    expect(new Set(texts).size).toBe(1_000);
    expect(new Set(server.submits.map((s) => s.messageId)).size).toBe(server.submits.length);
    expect(server.binds.filter((b) => b.status === 0).length).toBeGreaterThanOrEqual(3);
    expect(server.pdus.some((pdu) => pdu.dropped)).toBe(true);
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
    const token = await platform.token();
    const from = await ownNumber(platform, token, ["sms"]);
    const template = await createTemplate(platform, token, "{{text}}", ["sms"]);
    const ids = await sendMany(platform, token, {
      from,
      templateId: template.id,
      count: 80,
      prefix: "paced",
      parallel: 8,
    });
    await eventually(
      () => statuses(platform, ids),
      (counts) => counts.delivered === 80,
      60_000,
    );
    const paced = server.submits.filter((s) => s.text.startsWith("paced "));
    expect(paced).toHaveLength(80);
    expect(server.submitsPerSecond()).toBeLessThanOrEqual(throughput);
    const bySession = new Set(paced.map((s) => s.sessionId));
    expect(bySession.size).toBe(2);
    expect(server.throttled).toHaveLength(0);
  });
});
