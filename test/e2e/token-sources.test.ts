import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

/** Token requests from two loopback addresses: the gateway sees each as its own source. */
const ATTACKER = "127.0.0.2";
const CLIENT = "127.0.0.3";

interface TokenReply {
  status: number;
  retryAfter: string | undefined;
  ms: number;
}

/** POST /oauth/token over a connection whose local address is `from`. */
function tokenFrom(base: string, from: string, id: string, secret: string): Promise<TokenReply> {
  const body = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: id,
    client_secret: secret,
  }).toString();
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}/oauth/token`,
      {
        method: "POST",
        localAddress: from,
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          "Content-Length": Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers["retry-after"],
            ms: performance.now() - started,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Client ids are not secret and anyone can send guesses: the lockout and the queue for secret
 * hashing must make a guesser pay, not the client it guesses at or the other clients.
 */
describe("token requests by source address", () => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await startTestPlatform({ database: "postgres", redis: true, contract: "off" });
  });
  afterAll(async () => p?.stop());

  it("locks out the address that guesses, not the client: its right secret works elsewhere", async () => {
    const guesses: TokenReply[] = [];
    for (let i = 0; i < 16; i += 1) {
      guesses.push(await tokenFrom(p.url, ATTACKER, p.clientId, `sbcs_wrong_${i}`));
    }
    expect(guesses.every((reply) => reply.status === 401)).toBe(true);
    expect(guesses.at(-1)!.retryAfter).toBeDefined();

    // The client, from its own address, gets its token at once.
    expect((await tokenFrom(p.url, CLIENT, p.clientId, p.clientSecret)).status).toBe(200);
    // The guessing address stays locked, even with the right secret (docs/security.md).
    const own = await tokenFrom(p.url, ATTACKER, p.clientId, p.clientSecret);
    expect(own.status).toBe(401);
    expect(Number(own.retryAfter)).toBeGreaterThan(0);
  });

  it("keeps a flood of guesses from one address from delaying another address's token", async () => {
    // More connections than one source may have hashing and waiting (2 + 16), each guessing as
    // fast as it can at made-up ids (never locked: every guess costs a hash).
    const connections = 40;
    let flooding = true;
    const statuses = new Map<number, number>();
    /** When each of the flood's hashed guesses (a 401) was answered. */
    const hashed: number[] = [];
    const flood = Array.from({ length: connections }, async () => {
      while (flooding) {
        const id = `cli_${randomBytes(8).toString("hex")}`;
        const reply = await tokenFrom(p.url, ATTACKER, id, "sbcs_guess").catch(() => undefined);
        if (!reply) continue;
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
        if (reply.status === 401) hashed.push(performance.now());
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const client: (TokenReply & { floodHashesMeanwhile: number })[] = [];
    for (let i = 0; i < 8; i += 1) {
      const started = performance.now();
      const reply = await tokenFrom(p.url, CLIENT, p.clientId, p.clientSecret);
      const ended = performance.now();
      const floodHashesMeanwhile = hashed.filter((at) => at > started && at < ended).length;
      client.push({ ...reply, floodHashesMeanwhile });
    }
    flooding = false;
    await Promise.all(flood);

    expect(statuses.get(401)).toBeGreaterThan(0);
    expect(client.map((reply) => reply.status)).toEqual(Array(8).fill(200));
    // The client's turn came after at most the two hashes running and one of the flood's turn
    // (and the other slot's while it hashed), never after the flood's backlog of 16 and more.
    // Counted in hashes, not milliseconds, so a slow or busy machine does not change it.
    expect(Math.max(...client.map((reply) => reply.floodHashesMeanwhile))).toBeLessThanOrEqual(8);
    expect(Math.max(...client.map((reply) => reply.ms))).toBeLessThan(5_000);
    // Past its share the flood was turned away at once (503 with Retry-After).
    expect(statuses.get(503)).toBeGreaterThan(0);
  });
});
