import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createPool, DomainError, type Pool } from "@switchboard/kit";
import { testDatabaseKinds, type TestDatabase } from "@switchboard/kit/testing";
import {
  createIdentity,
  migrateGateway,
  type Identity,
  type TokenRequest,
} from "../src/auth/index.js";
import { createAccount, createClient, type CreatedClient } from "../src/admin/index.js";
import { ClientLockout, LOCKOUT_THRESHOLD, MAX_LOCK_SECONDS } from "../src/auth/client-lockout.js";
import { HashingGate } from "../src/auth/hashing-gate.js";

/** Every scrypt that checks a presented secret goes through verifySecret: count them. */
const scrypts = vi.hoisted(() => ({ count: 0 }));
vi.mock("../src/auth/secret-hash.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/auth/secret-hash.js")>();
  return {
    ...original,
    verifySecret: (secret: string, stored: string) => {
      scrypts.count += 1;
      return original.verifySecret(secret, stored);
    },
  };
});

const FORM = "application/x-www-form-urlencoded";
/** The address the token requests of these tests come from. */
const SOURCE = "192.0.2.10";

describe("the hashing gate", () => {
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };

  it("runs at most `limit` at once, hands slots over in order, and says who waited", async () => {
    const gate = new HashingGate(2, 10);
    let running = 0;
    let most = 0;
    const releases = Array.from({ length: 6 }, deferred);
    const waited: boolean[] = [];
    const runs = releases.map((release, i) =>
      gate.run("src", async (w) => {
        waited[i] = w;
        running += 1;
        most = Math.max(most, running);
        await release.promise;
        running -= 1;
        return i;
      }),
    );
    for (const release of releases) {
      await new Promise((r) => setTimeout(r, 5));
      release.resolve();
    }
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(gate.peak).toBe(2);
    expect(waited).toEqual([false, false, true, true, true, true]);
    // All slots are free again.
    expect(await gate.run("src", async (w) => w)).toBe(false);
  });

  it("refuses past its queue with 503 service-unavailable and Retry-After", async () => {
    const gate = new HashingGate(1, 1);
    const hold = deferred();
    const first = gate.run("src", () => hold.promise);
    const second = gate.run("src", async () => "queued");
    const third = gate.run("src", async () => "never");
    await expect(third).rejects.toBeInstanceOf(DomainError);
    await expect(third).rejects.toMatchObject({
      kind: "service-unavailable",
      meta: { retryAfter: 1 },
    });
    hold.resolve();
    await first;
    expect(await second).toBe("queued");
  });

  it("lets sources take turns: a source's backlog does not delay another source", async () => {
    const gate = new HashingGate(1, 64, 16);
    const order: string[] = [];
    const hold = deferred();
    const running = gate.run("flood", async () => {
      order.push("flood-0");
      await hold.promise;
    });
    const flood = Array.from({ length: 10 }, (_, i) =>
      gate.run("flood", async () => void order.push(`flood-${i + 1}`)),
    );
    const legit = gate.run("legit", async () => void order.push("legit"));
    hold.resolve();
    await Promise.all([running, ...flood, legit]);
    // The flood's first waiter was already in turn; the other source comes right after it.
    expect(order.slice(0, 3)).toEqual(["flood-0", "flood-1", "legit"]);
    expect(order).toHaveLength(12);
  });

  it("refuses a source past its share of the queue, and still queues another source", async () => {
    const gate = new HashingGate(1, 64, 2);
    const hold = deferred();
    const first = gate.run("flood", () => hold.promise);
    const queued = [gate.run("flood", async () => "a"), gate.run("flood", async () => "b")];
    await expect(gate.run("flood", async () => "c")).rejects.toMatchObject({
      kind: "service-unavailable",
    });
    const other = gate.run("legit", async () => "legit");
    hold.resolve();
    await first;
    expect(await Promise.all([...queued, other])).toEqual(["a", "b", "legit"]);
  });

  it("frees the slot when the work throws", async () => {
    const gate = new HashingGate(1, 0);
    await expect(gate.run("src", () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await gate.run("src", async () => "free")).toBe("free");
  });
});

describe.each(testDatabaseKinds)("client lockout on $name", ({ create }) => {
  let database: TestDatabase;
  let pool: Pool;
  let identity: Identity;
  let client: CreatedClient;
  let lockout: ClientLockout;

  const token = (id: string, secret: string, source = SOURCE) =>
    identity.tokenEndpoint({
      contentType: FORM,
      form: { grant_type: "client_credentials", client_id: id, client_secret: secret },
      source,
    });
  /** Moves the id's lock and last failure into the past, as if `seconds` had gone by. */
  const age = (seconds: number) =>
    pool.query(
      `UPDATE gateway.client_lockouts
          SET last_failure_at = last_failure_at - $1 * interval '1 second',
              locked_until = locked_until - $1 * interval '1 second'`,
      [seconds],
    );
  const lockedFor = async (id: string) => (await lockout.state(id, SOURCE)).lockedForSeconds;

  beforeAll(async () => {
    database = await create("identity_lockout");
    pool = createPool(database.url, { max: 8 });
    await migrateGateway(pool);
    identity = createIdentity({
      pool,
      issuer: "https://api.switchboard.test",
      audience: "https://api.switchboard.test/v1",
      signingKeySecret: "test-signing-key-secret",
    });
    await identity.init();
    await createAccount(pool, { id: "acct_lockout", name: "Lockout" });
    lockout = new ClientLockout(pool);
  });
  beforeEach(async () => {
    await pool.query("DELETE FROM gateway.client_lockouts");
    client = await createClient(pool, { accountId: "acct_lockout", name: "guessed" });
    scrypts.count = 0;
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("locks from the fifth failure, 1 s doubling per failure up to 15 minutes", async () => {
    const id = "cli_backoff";
    for (let i = 1; i < LOCKOUT_THRESHOLD; i += 1) {
      await lockout.failed(id, SOURCE);
      expect(await lockedFor(id)).toBe(0);
    }
    const seen: number[] = [];
    for (let i = 0; i < 14; i += 1) {
      await lockout.failed(id, SOURCE);
      seen.push(await lockedFor(id));
    }
    expect(seen.slice(0, 11)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900]);
    expect(seen.slice(11)).toEqual([MAX_LOCK_SECONDS, MAX_LOCK_SECONDS, MAX_LOCK_SECONDS]);
    await lockout.succeeded(id, SOURCE);
    expect(await lockout.state(id, SOURCE)).toEqual({ lockedForSeconds: 0, hasFailures: false });
  });

  it("starts counting again when failures are more than 15 minutes apart", async () => {
    const id = "cli_slow";
    for (let i = 0; i < LOCKOUT_THRESHOLD - 1; i += 1) await lockout.failed(id, SOURCE);
    await age(15 * 60 + 1);
    await lockout.failed(id, SOURCE);
    expect(await lockedFor(id)).toBe(0);
  });

  it("purges rows that mean nothing any more, so guesses at made-up ids do not pile up", async () => {
    const ids = Array.from({ length: 5 }, (_, i) => `cli_made_up_${i}`);
    for (const id of ids) await lockout.failed(id, SOURCE);
    await age(15 * 60 + 1);
    // Still locked although its last failure is old: kept.
    for (let i = 0; i < LOCKOUT_THRESHOLD + 10; i += 1)
      await lockout.failed("cli_locked_long", SOURCE);
    await pool.query(
      `UPDATE gateway.client_lockouts SET last_failure_at = now() - interval '1 hour'
        WHERE locked_until > now()`,
    );
    await lockout.failed("cli_recent", SOURCE);
    expect(await lockout.purge()).toBe(ids.length);
    expect(await lockedFor("cli_locked_long")).toBeGreaterThan(0);
    expect((await lockout.state("cli_recent", SOURCE)).hasFailures).toBe(true);
    for (const id of ids) expect((await lockout.state(id, SOURCE)).hasFailures).toBe(false);

    // A gateway purges by itself as it counts failures.
    await pool.query("DELETE FROM gateway.client_lockouts");
    const counting = new ClientLockout(pool, { purgeEvery: 3 });
    await counting.failed("cli_a", SOURCE);
    await counting.failed("cli_b", SOURCE);
    await age(15 * 60 + 1);
    await counting.failed("cli_c", SOURCE);
    await vi.waitFor(async () => {
      const { rows } = await pool.query("SELECT count(*)::int AS n FROM gateway.client_lockouts");
      expect(rows[0]).toEqual({ n: 1 });
    });
  });

  it("refuses even the right secret while locked, without hashing, and accepts it after", async () => {
    for (let i = 0; i < LOCKOUT_THRESHOLD; i += 1) {
      expect((await token(client.clientId, `wrong-secret-${i}-padding`)).status).toBe(401);
    }
    expect(scrypts.count).toBe(LOCKOUT_THRESHOLD);
    const locked = await token(client.clientId, client.clientSecret);
    expect(locked).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    expect(locked.headers["Retry-After"]).toBe("1");
    expect(scrypts.count).toBe(LOCKOUT_THRESHOLD);

    await age(2);
    expect((await token(client.clientId, client.clientSecret)).status).toBe(200);
    expect(await lockout.state(client.clientId, SOURCE)).toEqual({
      lockedForSeconds: 0,
      hasFailures: false,
    });
  });

  it("locks only the guessing source: the right secret from another address still works", async () => {
    const attacker = "203.0.113.66";
    for (let i = 0; i < 16; i += 1) {
      expect((await token(client.clientId, `wrong-secret-${i}-padding`, attacker)).status).toBe(
        401,
      );
    }
    // The attacker's own address is locked, the right secret included (and nothing is hashed).
    const count = scrypts.count;
    const locked = await token(client.clientId, client.clientSecret, attacker);
    expect(locked).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    expect(Number(locked.headers["Retry-After"])).toBeGreaterThan(0);
    expect(scrypts.count).toBe(count);
    // The client, from its own address, is not.
    expect((await token(client.clientId, client.clientSecret, SOURCE)).status).toBe(200);
    expect((await token(client.clientId, client.clientSecret, "2001:db8:1:2::7")).status).toBe(200);
    // Its success does not unlock the attacker.
    expect((await lockout.state(client.clientId, attacker)).lockedForSeconds).toBeGreaterThan(0);
  });

  it("hashes about as often as the threshold allows under a burst at one client id", async () => {
    // Two hashing and 16 waiting: as many as one source may have at once.
    const burst = 18;
    const replies = await Promise.all(
      Array.from({ length: burst }, (_, i) => token(client.clientId, `wrong-secret-${i}-padding`)),
    );
    expect(replies.every((r) => r.status === 401 && "error" in r.body)).toBe(true);
    // The two that start at once, then those that waited and still found the id unlocked.
    expect(scrypts.count).toBeLessThanOrEqual(LOCKOUT_THRESHOLD + 1);
    expect(scrypts.count).toBeGreaterThanOrEqual(LOCKOUT_THRESHOLD);
    expect(replies.filter((r) => r.headers["Retry-After"] !== undefined).length).toBe(
      burst - scrypts.count,
    );
  });

  it("answers an unknown client id exactly as a known one, locked or not", async () => {
    const shape = (r: Awaited<ReturnType<typeof token>>) => ({
      status: r.status,
      body: r.body,
      headers: Object.keys(r.headers).sort(),
    });
    const known: unknown[] = [];
    const unknown: unknown[] = [];
    for (let i = 0; i <= LOCKOUT_THRESHOLD; i += 1) {
      known.push(shape(await token(client.clientId, `wrong-secret-${i}-padding`)));
      unknown.push(shape(await token("cli_nobody_at_all", `wrong-secret-${i}-padding`)));
    }
    expect(unknown).toEqual(known);
    // Each costs one scrypt until the lock, none after.
    expect(scrypts.count).toBe(2 * LOCKOUT_THRESHOLD);
  });

  it.each([
    ["a NUL in client_id (form)", { client_id: "cli_\u0000", client_secret: "x" }, undefined],
    ["a NUL in client_secret (form)", { client_id: "cli_a", client_secret: "a\u0000b" }, undefined],
    [
      "a lone surrogate in client_id (form)",
      { client_id: "\ud800", client_secret: "x" },
      undefined,
    ],
    ["a NUL in client_id (Basic)", {}, `Basic ${Buffer.from("a%00:x").toString("base64")}`],
  ] as const)(
    "answers %s with invalid_client, touching neither hash nor lockout",
    async (_, credentials, authorization) => {
      const request: TokenRequest = {
        contentType: FORM,
        form: { grant_type: "client_credentials", ...credentials },
        ...(authorization ? { authorization } : {}),
      };
      const reply = await identity.tokenEndpoint(request);
      expect(reply).toMatchObject({ status: 401, body: { error: "invalid_client" } });
      expect(reply.headers["WWW-Authenticate"]).toBe('Basic realm="switchboard"');
      expect(scrypts.count).toBe(0);
      const { rows } = await pool.query("SELECT 1 FROM gateway.client_lockouts");
      expect(rows).toEqual([]);
    },
  );
});
