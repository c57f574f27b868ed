import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createLogger,
  createPool,
  DomainError,
  validationFailed,
  type Pool,
  MemoryBucketStore,
} from "@switchboard/kit";
import { testDatabaseKinds, type TestDatabase } from "@switchboard/kit/testing";
import { migrateGateway, type Principal, type Scope } from "../src/auth/index.js";
import { createHttpApp } from "../src/http/app.js";
import { ReplyCommitter, replyCommitMiddleware } from "../src/records/index.js";
import type { Stage } from "../src/http/pipeline.js";
import {
  createIdempotencyLayer,
  type IdempotencyLayer,
} from "../src/policies/idempotency-stage.js";
import { IdempotencyStore } from "../src/policies/idempotency-store.js";
import { ResponseSealer } from "../src/policies/response-sealing.js";
import { PolicyCounters } from "../src/policies/policy-counters.js";
import { parseRateLimits } from "../src/policies/rate-limit-config.js";
import { createRateLimiter } from "../src/policies/rate-limit-stage.js";
import { created, ok } from "../src/routes/replies.js";
import { defineRoute } from "../src/http/route-spec.js";

const logger = createLogger("test", { level: "silent" });
const ERRORS_URL = "http://gw.test/v1/errors";

/** Stands in for authentication: `X-Account` names the caller's account. */
const fakeAuthentication: Stage = async (exchange, next) => {
  if (exchange.route.scope === null) return next();
  const account = exchange.req.headers["x-account"];
  if (typeof account !== "string") throw new DomainError("unauthenticated", "no credential");
  const principal: Principal = {
    accountId: account,
    principalId: "cli_test",
    kind: "client",
    scopes: new Set<Scope>(["numbers:write"]),
  };
  exchange.principal = principal;
  return next();
};

/**
 * The idempotency stage in the real pipeline (express app, rate limit before it), over a real
 * store, around operations whose executions the test counts and controls.
 */
describe.each(testDatabaseKinds)("idempotency stage on $name", ({ create }) => {
  let database: TestDatabase;
  let pool: Pool;
  let server: Server;
  let base: string;
  let store: IdempotencyStore;
  let layer: IdempotencyLayer;
  const counters = new PolicyCounters();
  let executions: { value: string; key: string | undefined }[] = [];
  let failures: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  const finished: { path: string; status: number; replayed: boolean }[] = [];
  let storeDown = false;
  /** The bucket store's clock (ms): advanced by hand to refill. */
  let clock = 0;

  const createThing = (path: string, scope: Scope) =>
    defineRoute({
      method: "post",
      path,
      operationId: `create${scope}`,
      summary: "test",
      tag: "Test",
      scope,
      body: z.object({ value: z.string().min(1) }),
      success: { status: 201, description: "created" },
      problems: [],
      handler: async (ctx) => {
        executions.push({ value: ctx.body.value, key: ctx.idempotencyKey });
        await gate;
        const failure = failures.shift();
        if (failure === "500") throw new Error("boom");
        if (failure === "503")
          throw new DomainError("service-unavailable", "down", { retryAfter: 1 });
        if (failure === "403") throw new DomainError("insufficient-scope", "no");
        if (failure === "429") throw new DomainError("rate-limited", "later", { retryAfter: 1 });
        if (failure === "422") throw validationFailed([{ pointer: "#/value", detail: "rejected" }]);
        if (failure === "409") throw new DomainError("number-unavailable", "taken");
        const id = `thg_${executions.length}`;
        return created(`/v1/api/test/things/${id}`, { id, value: ctx.body.value });
      },
    });
  const routes = [
    createThing("/api/test/things", "numbers:write"),
    // One token a second: the bucket that refuses (each test uses its own account).
    createThing("/api/test/scarce", "calls:write"),
    defineRoute({
      method: "get",
      path: "/api/test/things",
      operationId: "listThings",
      summary: "test",
      tag: "Test",
      scope: "numbers:write",
      success: { status: 200, description: "ok" },
      problems: [],
      handler: async () => ok({ count: executions.length }),
    }),
  ];

  const post = (value: string, options: { key?: string; account?: string; path?: string } = {}) =>
    fetch(`${base}${options.path ?? "/v1/api/test/things"}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-Account": options.account ?? "acct_a",
        ...(options.key !== undefined ? { "Idempotency-Key": options.key } : {}),
      },
      body: JSON.stringify({ value }),
    });

  beforeAll(async () => {
    database = await create("idem_stage");
    pool = createPool(database.url, { max: 10 });
    await migrateGateway(pool);
    const db = {
      query: ((...args: Parameters<Pool["query"]>) =>
        storeDown
          ? Promise.reject(
              Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
                code: "ECONNREFUSED",
              }),
            )
          : pool.query(...args)) as Pool["query"],
    };
    store = new IdempotencyStore(db, {
      windowSeconds: 86_400,
      leaseSeconds: 30,
      sealer: new ResponseSealer("test-sealing-secret"),
    });
    const rateLimiter = createRateLimiter({
      store: new MemoryBucketStore({ now: () => clock }),
      limits: parseRateLimits("*=10000/10000,calls:write=1/1"),
      counters,
    });
    layer = createIdempotencyLayer({
      store,
      counters,
      logger,
      errorsUrl: ERRORS_URL,
      waitMs: 400,
      admit: rateLimiter.admit,
    });
    const committer = new ReplyCommitter({ db, store, logger, budgetMs: 200 });
    const app = createHttpApp({
      routes,
      // As the gateway wires them: kept answers committed before the reply, the rate limit in
      // the idempotency stage.
      first: [
        replyCommitMiddleware({ committer, records: undefined, errorsUrl: ERRORS_URL, logger }),
      ],
      stages: [fakeAuthentication, layer.stage],
      before: [
        (req, res, next) => {
          res.on("finish", () =>
            finished.push({
              path: req.originalUrl,
              status: res.statusCode,
              replayed: res.locals.replayed === true,
            }),
          );
          next();
        },
      ],
      errorHandlers: [rateLimiter.unrouted],
      errorsUrl: ERRORS_URL,
      logger,
    });
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await pool?.end();
    await database?.drop();
  });

  beforeEach(() => {
    executions = [];
    failures = [];
    gate = Promise.resolve();
    storeDown = false;
  });

  const keyOf = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;

  it("runs once and replays status, body and Location, marked on the reply and res.locals", async () => {
    const key = keyOf("replay");
    const first = await post("a", { key });
    const again = await post("a", { key: `"${key}"` });
    expect(executions).toEqual([{ value: "a", key }]);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(await again.text()).toBe(await first.text());
    expect(again.headers.get("x-ratelimit-remaining")).not.toBeNull();
    expect(again.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(finished.slice(-2).map((f) => f.replayed)).toEqual([false, true]);
  });

  it("keeps the operation's own 4xx and replays it", async () => {
    const key = keyOf("kept");
    failures = ["422"];
    const first = await post("b", { key });
    const again = await post("b", { key });
    expect([first.status, again.status]).toEqual([422, 422]);
    expect(again.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    expect(executions).toHaveLength(1);
  });

  it.each(["500", "503", "403", "429"])(
    "does not keep a %s: the retry runs again",
    async (status) => {
      const key = keyOf(`free-${status}`);
      failures = [status];
      const first = await post("c", { key });
      expect(first.status).toBe(Number(status));
      const retry = await post("c", { key });
      expect(retry.status).toBe(201);
      expect(retry.headers.get("idempotent-replayed")).toBeNull();
      expect(executions).toHaveLength(2);
    },
  );

  it("answers 409 idempotency-mismatch for another body or path with the key", async () => {
    const key = keyOf("mismatch");
    expect((await post("d", { key })).status).toBe(201);
    const response = await post("other", { key });
    expect(response.status).toBe(409);
    const problem = (await response.json()) as Record<string, unknown>;
    expect(problem.type).toBe(`${ERRORS_URL}/idempotency-mismatch`);
    expect(problem.title).toBe("Idempotency-Key was reused with a different request body");
    expect(problem.status).toBe(409);
    expect(executions).toHaveLength(1);
  });

  it("scopes keys to the account", async () => {
    const key = keyOf("scoped");
    expect((await post("e", { key, account: "acct_a" })).status).toBe(201);
    const other = await post("e", { key, account: "acct_b" });
    expect(other.status).toBe(201);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(executions).toHaveLength(2);
  });

  it("makes a retry wait for the original and replay it", async () => {
    const key = keyOf("wait");
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const original = post("f", { key });
    await sleep(100);
    const waiting = post("f", { key });
    await sleep(100);
    open();
    const [first, second] = await Promise.all([original, waiting]);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(executions).toHaveLength(1);
  });

  it("answers 409 idempotency-in-progress with Retry-After past the wait", async () => {
    const key = keyOf("busy");
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const original = post("g", { key });
    await sleep(50);
    const started = Date.now();
    const busy = await post("g", { key });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(busy.status).toBe(409);
    expect(Number(busy.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await busy.json()) as { type: string }).type).toBe(
      `${ERRORS_URL}/idempotency-in-progress`,
    );
    open();
    expect((await original).status).toBe(201);
    expect((await post("g", { key })).headers.get("idempotent-replayed")).toBe("true");
  });

  it("recovers a key whose gateway died mid-request once its lease runs out", async () => {
    const key = keyOf("dead");
    const print = (await import("../src/policies/fingerprint.js")).requestFingerprint(
      "POST",
      "/api/test/things",
      { value: "h" },
      "client:cli_test",
    );
    expect((await store.claim("acct_a", key, print)).kind).toBe("claimed");
    const held = await post("h", { key });
    expect(held.status).toBe(409);
    // Retry-After says when the dead holder's lease runs out, not a blind second.
    const leaseSeconds = store.options.leaseSeconds;
    const retryAfter = Number(held.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(leaseSeconds - 3);
    expect(retryAfter).toBeLessThanOrEqual(leaseSeconds);
    await pool.query(
      "UPDATE gateway.idempotency_keys SET lease_expires_at = now() - interval '1 second' WHERE idempotency_key = $1",
      [key],
    );
    const takeovers = counters.idempotencyLeaseTakeovers;
    const recovered = await post("h", { key });
    expect(recovered.status).toBe(201);
    expect(executions).toHaveLength(1);
    expect(counters.idempotencyLeaseTakeovers).toBe(takeovers + 1);
  });

  it("refuses a malformed key with 400 and runs nothing", async () => {
    const response = await post("i", { key: "not a key" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { type: string }).type).toBe(
      `${ERRORS_URL}/invalid-idempotency-key`,
    );
    expect(executions).toHaveLength(0);
  });

  it("does not run the operation when the store is unavailable", async () => {
    storeDown = true;
    const response = await post("j", { key: keyOf("down") });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(executions).toHaveLength(0);
  });

  it("keeps the answer before the reply: with the store down then, the reply is 503 and the retry gets the first answer, not a rerun", async () => {
    const key = keyOf("answered");
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const first = post("k", { key });
    while (executions.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    storeDown = true; // the operation ran; its answer cannot be stored now
    open();
    const response = await first;
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(response.headers.get("location")).toBeNull();
    storeDown = false;
    // Stored as soon as the store takes it again.
    for (let i = 0; i < 200 && (await rowOf(key))[0]?.state !== "completed"; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const retry = await post("k", { key });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(executions).toHaveLength(1);
  });

  const scarce = "/v1/api/test/scarce";
  const rowOf = async (key: string) =>
    (
      await pool.query<{ state: string; lease_id: string | null }>(
        "SELECT state, lease_id FROM gateway.idempotency_keys WHERE idempotency_key = $1",
        [key],
      )
    ).rows;

  it("answers 429 before the key: runs nothing, leaves no claim, and the retry after refill runs", async () => {
    const account = keyOf("acct");
    const [spent, refused] = [keyOf("spent"), keyOf("refused")];
    expect((await post("l", { key: spent, account, path: scarce })).status).toBe(201);
    const limited = await post("m", { key: refused, account, path: scarce });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(executions).toHaveLength(1);
    expect(await rowOf(refused)).toEqual([]);

    clock += 1_000;
    const retry = await post("m", { key: refused, account, path: scarce });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(executions.map((e) => e.value)).toEqual(["l", "m"]);
  });

  it("answers 429 whatever the key: a replay, a mismatch, a malformed key, the store down", async () => {
    const account = keyOf("acct");
    const key = keyOf("limited");
    expect((await post("n", { key, account, path: scarce })).status).toBe(201);
    await layer.drain(); // its response kept before the store goes down below
    const [replays, conflicts] = [counters.idempotentReplays, counters.idempotencyConflicts];
    const replay = await post("n", { key, account, path: scarce });
    expect(replay.status).toBe(429);
    expect(replay.headers.get("idempotent-replayed")).toBeNull();
    expect((await post("other", { key, account, path: scarce })).status).toBe(429);
    expect((await post("n", { key: "not a key", account, path: scarce })).status).toBe(429);
    storeDown = true;
    expect((await post("n", { key: keyOf("down"), account, path: scarce })).status).toBe(429);
    storeDown = false;
    expect([counters.idempotentReplays, counters.idempotencyConflicts]).toEqual([
      replays,
      conflicts,
    ]);
    expect(executions).toHaveLength(1);
    expect(await rowOf(key)).toEqual([{ state: "completed", lease_id: null }]);

    clock += 1_000;
    const later = await post("n", { key, account, path: scarce });
    expect(later.status).toBe(201);
    expect(later.headers.get("idempotent-replayed")).toBe("true");
  });

  it("does not take over a dead key for a request it refuses", async () => {
    const account = keyOf("acct");
    const key = keyOf("dead-refused");
    const print = (await import("../src/policies/fingerprint.js")).requestFingerprint(
      "POST",
      "/api/test/scarce",
      { value: "o" },
      "client:cli_test",
    );
    const claimed = await store.claim(account, key, print);
    expect(claimed.kind).toBe("claimed");
    await pool.query(
      "UPDATE gateway.idempotency_keys SET lease_expires_at = now() - interval '1 second' WHERE idempotency_key = $1",
      [key],
    );
    expect((await post("spend", { key: keyOf("spend"), account, path: scarce })).status).toBe(201);
    const takeovers = counters.idempotencyLeaseTakeovers;
    expect((await post("o", { key, account, path: scarce })).status).toBe(429);
    const leaseId = claimed.kind === "claimed" ? claimed.leaseId : "";
    expect(await rowOf(key)).toEqual([{ state: "in_progress", lease_id: leaseId }]);
    expect(counters.idempotencyLeaseTakeovers).toBe(takeovers);

    clock += 1_000;
    expect((await post("o", { key, account, path: scarce })).status).toBe(201);
    expect(counters.idempotencyLeaseTakeovers).toBe(takeovers + 1);
    expect(executions.map((e) => e.value)).toEqual(["spend", "o"]);
  });

  it("ignores the header on safe methods and without a key runs every time", async () => {
    const response = await fetch(`${base}/v1/api/test/things`, {
      headers: { "X-Account": "acct_a", "Idempotency-Key": "not a key" },
    });
    expect(response.status).toBe(200);
    await post("k");
    await post("k");
    expect(executions).toHaveLength(2);
  });
});
