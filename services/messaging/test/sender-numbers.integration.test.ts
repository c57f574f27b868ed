import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricsRegistry } from "@switchboard/kit";
import {
  createConsent,
  createTemplate,
  ownNumber,
  sandboxNumber,
  send,
  sendWithConsent,
} from "@switchboard/test-support/fixtures/messages";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import { eventually } from "@switchboard/test-support/waiting";
import { SenderNumbers } from "../src/sender-numbers.js";

/** GetNumber and FindNumberOwner calls the inventory answered in this process. */
async function inventoryReads(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("grpc_server_handled_total")?.get();
  return (metric?.values ?? [])
    .filter((v) => v.labels.method === "GetNumber" || v.labels.method === "FindNumberOwner")
    .reduce((sum, v) => sum + v.value, 0);
}

/** Whether `check` holds within `withinMs` (polled). */
const within = (withinMs: number, check: () => Promise<boolean>) =>
  eventually(check, (held) => held, withinMs);

/**
 * The sending numbers two messaging replicas remember (real PostgreSQL and Redis, the real
 * inventory and its WatchNumberOwners stream): each asks the inventory once per number while
 * watching; a release reaches both, and the platform's own messaging service, within a second
 * (before: each remembered a number for MESSAGING_NUMBER_CACHE_MS, 5 s, so a released number
 * could still send for that long); while the watch is down every lookup asks.
 */
describe("the sending numbers each messaging replica remembers", () => {
  let p: MessagingPlatform;
  let token: string;
  let replicas: SenderNumbers[];

  /** How many inventory reads `times` lookups of the number, by E.164 and by id, took. */
  const readsFor = async (replica: SenderNumbers, e164: string, id: string, times: number) => {
    const before = await inventoryReads();
    for (let i = 0; i < times; i += 1) {
      await replica.find(p.accountId, e164);
      await replica.find(p.accountId, id);
      await replica.owner(e164);
    }
    return (await inventoryReads()) - before;
  };
  const remembering = (replica: SenderNumbers, e164: string, id: string) =>
    within(5_000, async () => (await readsFor(replica, e164, id, 2)) === 0);
  const idOf = async (e164: string) => (await replicas[0]!.find(p.accountId, e164))!.id;

  beforeAll(async () => {
    p = await startMessagingPlatform();
    token = await p.token();
    const address = `127.0.0.1:${p.platform.services.inventory!.port}`;
    replicas = [1, 2].map(() => new SenderNumbers(address, { deadlineMs: 5_000, rewatchMs: 200 }));
  });
  afterAll(async () => {
    for (const replica of replicas ?? []) replica.close();
    await p?.stop();
  });

  it("asks the inventory once per number on each replica while watching, by E.164 and by id", async () => {
    const number = await ownNumber(p, token, ["sms"]);
    const id = await idOf(number);
    for (const replica of replicas) {
      expect(await remembering(replica, number, id)).toBe(true);
      expect(await replica.find(p.accountId, number)).toMatchObject({ id, number });
      expect(await replica.find(p.accountId, id)).toMatchObject({ id, number });
      expect(await replica.owner(number)).toMatchObject({ accountId: p.accountId });
      expect(await replica.find("acct_01jd00000000000000000000c2", number)).toBeUndefined();
      expect(await readsFor(replica, number, id, 5)).toBe(0);
    }
  });

  it("forgets a released number on both replicas within a second, and the API refuses a send from it", async () => {
    const number = await ownNumber(p, token, ["sms"], [], 1);
    const id = await idOf(number);
    const template = await createTemplate(p, token, "Order {{n}} shipped");
    await sendWithConsent(p, token, {
      to: sandboxNumber(0),
      from: number,
      templateId: template.id,
    });
    for (const replica of replicas) expect(await remembering(replica, number, id)).toBe(true);

    const released = await p.request(`/v1/api/numbers/${id}/release`, { method: "POST", token });
    expect(released.status).toBe(200);
    for (const replica of replicas) {
      const forgotten = await within(1_000, async () => {
        const [byNumber, byId, owner] = await Promise.all([
          replica.find(p.accountId, number),
          replica.find(p.accountId, id),
          replica.owner(number),
        ]);
        return byNumber === undefined && byId === undefined && owner === undefined;
      });
      expect(forgotten).toBe(true);
    }
    const consent = await createConsent(p, token, sandboxNumber(1));
    const refused = await send(p, token, {
      channel: "sms",
      to: sandboxNumber(1),
      from: number,
      template_id: template.id,
      variables: { n: "42" },
      consent_id: consent.id,
    });
    expect(refused.status).toBe(422);
  });

  it("asks on every lookup while the watch is down, and remembers again once it is back", async () => {
    const number = await ownNumber(p, token, ["sms"], [], 2);
    const id = await idOf(number);
    for (const replica of replicas) expect(await remembering(replica, number, id)).toBe(true);
    // The inventory loses its LISTEN: it ends every watch, since a change could pass unheard.
    await p.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'LISTEN "inventory_number_owner"%'`,
    );
    for (const replica of replicas) {
      const reading = await within(
        1_000,
        async () => (await readsFor(replica, number, id, 1)) === 3,
      );
      expect(reading).toBe(true);
    }
    for (const replica of replicas) expect(await remembering(replica, number, id)).toBe(true);
  });
});
