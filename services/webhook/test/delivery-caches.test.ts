import { describe, expect, it } from "vitest";
import { createBatcher } from "../src/batcher.js";
import { createDeliveryCaches } from "../src/delivery-caches.js";
import { createSecretBox, type SecretBox } from "../src/secret-box.js";
import { newSigningSecret, secretKey } from "../src/signature.js";
import { createTtlCache } from "@switchboard/kit";
import { checkWebhookUrl, UnsafeUrlError, type Resolver } from "../src/url-guard.js";

const countingResolver = (answers: Record<string, string[]>) => {
  const calls: string[] = [];
  const resolve: Resolver = async (host) => {
    calls.push(host);
    await new Promise((r) => setTimeout(r, 5));
    const found = answers[host];
    if (!found) throw new Error("ENOTFOUND");
    return found.map((address) => ({ address, family: 4 as const }));
  };
  return { resolve, calls };
};

const countingBox = (box: SecretBox) => {
  let opens = 0;
  return {
    box: { seal: box.seal, open: (e: string, s: string) => (opens++, box.open(e, s)) },
    opens: () => opens,
  };
};

describe("ttl cache", () => {
  it("forgets entries after the ttl and keeps at most maxEntries (oldest out)", () => {
    let now = 0;
    const cache = createTtlCache<number>({ ttlMs: 100, maxEntries: 2, now: () => now });
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("c", 3);
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([undefined, 2, 3]);
    now = 100;
    expect(cache.get("b")).toBeUndefined();
  });
});

describe("delivery caches", () => {
  it("reuses a DNS answer within its ttl and shares concurrent lookups of one host", async () => {
    const box = await createSecretBox("a-test-secret-that-is-long-enough-000");
    const dns = countingResolver({ "hooks.example": ["93.184.216.34"] });
    const caches = createDeliveryCaches({ box, resolve: dns.resolve, dnsTtlMs: 60_000 });
    const answers = await Promise.all([1, 2, 3].map(() => caches.resolve("hooks.example")));
    await caches.resolve("hooks.example");
    expect(dns.calls).toEqual(["hooks.example"]);
    expect(answers[0]).toEqual([{ address: "93.184.216.34", family: 4 }]);
  });

  it("looks a host up again after the ttl and never caches a failure", async () => {
    const box = await createSecretBox("a-test-secret-that-is-long-enough-000");
    const dns = countingResolver({ "hooks.example": ["93.184.216.34"] });
    const caches = createDeliveryCaches({ box, resolve: dns.resolve, dnsTtlMs: 1 });
    await caches.resolve("hooks.example");
    await new Promise((r) => setTimeout(r, 5));
    await caches.resolve("hooks.example");
    await expect(caches.resolve("nowhere.example")).rejects.toThrow();
    await expect(caches.resolve("nowhere.example")).rejects.toThrow();
    expect(dns.calls).toEqual([
      "hooks.example",
      "hooks.example",
      "nowhere.example",
      "nowhere.example",
    ]);
  });

  it("the guard still checks every cached address: a private answer is refused each time", async () => {
    const box = await createSecretBox("a-test-secret-that-is-long-enough-000");
    const dns = countingResolver({ "rebind.example": ["10.1.2.3"] });
    const caches = createDeliveryCaches({ box, resolve: dns.resolve, dnsTtlMs: 60_000 });
    const guard = { allowPrivateHosts: [], resolve: caches.resolve };
    for (let i = 0; i < 2; i++) {
      await expect(checkWebhookUrl(new URL("https://rebind.example/"), guard)).rejects.toThrow(
        UnsafeUrlError,
      );
    }
    expect(dns.calls).toHaveLength(1);
  });

  it("opens each sealed secret once, and a rotated secret's new envelope is opened", async () => {
    const counted = countingBox(await createSecretBox("a-test-secret-that-is-long-enough-000"));
    const caches = createDeliveryCaches({ box: counted.box });
    const [first, second] = [newSigningSecret(), newSigningSecret()];
    const sealedFirst = counted.box.seal(first, "whs_1");
    expect(caches.keys("whs_1", [sealedFirst])).toEqual([secretKey(first)]);
    expect(caches.keys("whs_1", [sealedFirst])).toEqual([secretKey(first)]);
    expect(counted.opens()).toBe(1);
    const sealedSecond = counted.box.seal(second, "whs_1");
    expect(caches.keys("whs_1", [sealedSecond, sealedFirst])).toEqual([
      secretKey(second),
      secretKey(first),
    ]);
    expect(counted.opens()).toBe(2);
    // bound to its subscription: the same envelope under another subscription does not open
    expect(() => caches.keys("whs_2", [sealedFirst])).toThrow(/cannot be opened/);
  });
});

describe("batcher with maxInFlight", () => {
  it("gathers what arrives during a flush into the next batch", async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const batcher = createBatcher(
      async (items: number[]) => {
        batches.push(items);
        if (batches.length === 1) await gate;
        return items.map((i) => i * 2);
      },
      { maxSize: 100, maxWaitMs: 1, maxInFlight: 1 },
    );
    const first = batcher.run(1);
    await new Promise((r) => setTimeout(r, 10));
    const later = [2, 3, 4].map((i) => batcher.run(i));
    await new Promise((r) => setTimeout(r, 10));
    expect(batches).toEqual([[1]]);
    release();
    expect(await Promise.all([first, ...later])).toEqual([2, 4, 6, 8]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });
});
