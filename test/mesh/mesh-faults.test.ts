import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerOf, requestFingerprint } from "@switchboard/gateway/policies/fingerprint";
import { eventually, startMeshHarness, type MeshHarness } from "./support/mesh-harness.js";
import {
  canOwnStores,
  startOwnPostgres,
  startOwnRedis,
  type OwnPostgres,
  type OwnRedis,
} from "./support/own-stores.js";

/**
 * The contract's promises under faults (docs/api.md §Records, §Idempotency, 503), on a mesh of
 * separate processes whose PostgreSQL cluster and Redis server are the test's own, so that they
 * can be killed, stopped and paused. Keyed writes and reads flow from a client that retries
 * 5xx with the same Idempotency-Key; afterwards every 2xx must have its record, every keyed
 * retry the first answer, and no reply may be a 500. docs/operations.md has the table.
 */
const inCi = process.env.CI === "true";

interface Sent {
  requestId: string;
  status: number;
  retryAfter: string | null;
  ms: number;
  /** When the reply arrived (ms since the epoch). */
  at: number;
  key?: string;
  body?: string;
}

describe.skipIf(!canOwnStores() && !inCi)(
  "faults: stores killed, stopped and paused under load",
  () => {
    let postgres: OwnPostgres;
    let redis: OwnRedis;
    let h: MeshHarness;
    let token: string;
    const sent: Sent[] = [];
    /** The first 2xx answer of each key, and every later answer with that key. */
    const answers = new Map<string, { first: string; later: string[] }>();

    beforeAll(async () => {
      postgres = await startOwnPostgres("faults");
      redis = await startOwnRedis();
      process.env.TEST_DATABASE_URL = postgres.url;
      process.env.TEST_REDIS_URL = redis.url;
      h = await startMeshHarness({ env: { GRPC_DEADLINE_MS: "5000" } });
      token = await h.token();
    }, 120_000);

    afterAll(async () => {
      // docs/operations.md, "What the platform survives": this run's table.
      console.log(
        [
          "| fault | load | 5xx | 503 | 500 | acked, then lost | keyed retry answered otherwise | first 2xx after |",
          "|---|---|---:|---:|---:|---:|---:|---:|",
          ...table,
        ].join("\n"),
      );
      await h?.stop().catch(() => undefined);
      await redis?.stop();
      postgres?.drop();
    });

    /** One request; keyed POSTs are retried on 5xx with the same key and body (as a careful client). */
    async function send(kind: "agent" | "read"): Promise<void> {
      const key = kind === "agent" ? `fault-${randomUUID()}` : undefined;
      const name = `agent-${randomUUID().slice(0, 8)}`;
      for (let attempt = 0; attempt < 20; attempt += 1) {
        const started = Date.now();
        let response: Response;
        try {
          response =
            kind === "agent"
              ? await fetch(`${h.url}/v1/api/agents`, {
                  method: "POST",
                  headers: {
                    authorization: `Bearer ${token}`,
                    "content-type": "application/json",
                    "idempotency-key": key!,
                  },
                  body: JSON.stringify({ name }),
                  signal: AbortSignal.timeout(30_000),
                })
              : await fetch(`${h.url}/v1/api/agents?limit=1`, {
                  headers: { authorization: `Bearer ${token}` },
                  signal: AbortSignal.timeout(30_000),
                });
        } catch {
          // The gateway itself was killed: the client retries.
          await new Promise((resolve) => setTimeout(resolve, 200));
          continue;
        }
        const body = await response.text();
        sent.push({
          requestId: response.headers.get("x-request-id") ?? "",
          status: response.status,
          retryAfter: response.headers.get("retry-after"),
          ms: Date.now() - started,
          at: Date.now(),
          ...(key ? { key, body } : {}),
        });
        if (key && response.status < 300) {
          const seen = answers.get(key);
          if (seen) seen.later.push(body);
          else answers.set(key, { first: body, later: [] });
        }
        if (response.status < 500) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }

    /** One row of docs/operations.md's fault table. */
    const table: string[] = [];

    /**
     * Runs `fault` while 4 clients send keyed creates and reads (about 40 requests a second here);
     * resolves when both are done, with the replies, and adds the fault's row to the table.
     */
    async function underLoad(name: string, fault: () => Promise<void>): Promise<Sent[]> {
      const from = sent.length;
      let running = true;
      const client = async (n: number) => {
        for (let i = 0; running; i += 1) await send((n + i) % 2 === 0 ? "agent" : "read");
      };
      const clients = Promise.all([0, 1, 2, 3].map(client));
      await new Promise((resolve) => setTimeout(resolve, 500));
      const faultStarted = Date.now();
      let faultEnded = faultStarted;
      try {
        await fault();
        faultEnded = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      } finally {
        running = false;
        await clients;
      }
      const replies = sent.slice(from);
      const seconds = (Date.now() - faultStarted + 500) / 1000;
      const recovered = replies.find((r) => r.at >= faultEnded && r.status < 300);
      const lost = replies.filter((r) => r.status < 300).length - (await recordedCount(replies));
      const mismatched = replies.filter(
        (r) => r.key && r.status < 300 && answers.get(r.key)?.first !== r.body,
      ).length;
      table.push(
        `| ${name} | ${replies.length} in ${seconds.toFixed(0)} s | ` +
          `${replies.filter((r) => r.status >= 500).length} | ` +
          `${replies.filter((r) => r.status === 503).length} | ` +
          `${replies.filter((r) => r.status === 500).length} | ${lost} | ${mismatched} | ` +
          `${recovered ? `${((recovered.at - faultEnded) / 1000).toFixed(1)} s` : "—"} |`,
      );
      return replies;
    }

    /** How many of the 2xx replies have their record, once the relay caught up (or 60 s). */
    async function recordedCount(replies: Sent[]): Promise<number> {
      const answered = replies.filter((r) => r.status < 300).map((r) => r.requestId);
      const found = await eventually(
        async () => (await recordedIds(answered)).size,
        (n) => n === answered.length,
        "records",
        60_000,
      ).catch(async () => (await recordedIds(answered)).size);
      return found;
    }

    const recordedIds = async (ids: string[]) => {
      const { rows } = await h.db.query<{ request_id: string }>(
        "SELECT request_id FROM usage.records WHERE kind = 'api.request' AND request_id = ANY($1)",
        [ids],
      );
      return new Set(rows.map((r) => r.request_id));
    };

    /** Every reply that was 2xx has its api.request record in the ledger (once the relay caught up). */
    async function expectEveryAnswerRecorded(replies: Sent[]) {
      const answered = replies.filter((r) => r.status < 300).map((r) => r.requestId);
      expect(answered.length).toBeGreaterThan(0);
      const missing = await eventually(
        async () => {
          const recorded = await recordedIds(answered);
          return answered.filter((id) => !recorded.has(id));
        },
        (ids) => ids.length === 0,
        "every answered request's record",
        60_000,
      );
      expect(missing).toEqual([]);
    }

    const noServerErrors = (replies: Sent[]) => {
      expect(replies.filter((r) => r.status === 500)).toEqual([]);
      for (const r of replies.filter((r) => r.status === 503))
        expect(r.retryAfter).toMatch(/^\d+$/);
    };

    it("Redis killed, then the gateway killed: every answered request keeps its record, no reply waits on Redis", async () => {
      const replies = await underLoad("Redis kill -9, 3 s later the gateway kill -9", async () => {
        await redis.kill();
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        h.mesh.children.gateway.kill("SIGKILL");
        await h.mesh.children.gateway.waitReady(30_000);
        await redis.start();
      });
      noServerErrors(replies);
      const whileRedisDown = replies.filter((r) => r.status < 300).map((r) => r.ms);
      expect(Math.max(...whileRedisDown)).toBeLessThan(2_000);
      await expectEveryAnswerRecorded(replies);
    }, 120_000);

    it("PostgreSQL stopped 4 s: refusals are 503 with Retry-After, never 500; every answer recorded", async () => {
      const replies = await underLoad("PostgreSQL stopped 4 s", async () => {
        await postgres.stop();
        await new Promise((resolve) => setTimeout(resolve, 4_000));
        await postgres.start();
      });
      noServerErrors(replies);
      expect(replies.some((r) => r.status === 503)).toBe(true);
      await expectEveryAnswerRecorded(replies);
    }, 120_000);

    it("PostgreSQL paused 20 s: every request is answered within its deadlines, 503/504 not 500", async () => {
      const replies = await underLoad("PostgreSQL paused (SIGSTOP) 20 s", async () => {
        postgres.pause();
        await new Promise((resolve) => setTimeout(resolve, 20_000));
        postgres.resume();
      });
      noServerErrors(replies);
      // The gateway's statements have a deadline (3 s) and its calls one (5 s). The longest a
      // request can take is a retry waiting for a key still held (IDEMPOTENCY_WAIT_MS, 10 s),
      // one claim past its deadline (3.5 s) and its reply's commit budget (2 s): well inside the
      // pause, so no request waits for the database to come back.
      expect(Math.max(...replies.map((r) => r.ms))).toBeLessThan(16_500);
      await expectEveryAnswerRecorded(replies);
    }, 120_000);

    it("PostgreSQL restarted (fast): no 500, every answer recorded", async () => {
      const replies = await underLoad("PostgreSQL fast restart", async () => {
        await postgres.stop();
        await postgres.start();
      });
      noServerErrors(replies);
      await expectEveryAnswerRecorded(replies);
    }, 120_000);

    for (const name of ["inventory", "call-control", "usage", "webhook", "messaging"] as const) {
      it(`${name} killed (SIGKILL) and restarted by its supervisor: no 500, every answer recorded`, async () => {
        const replies = await underLoad(`${name} kill -9`, async () => {
          const child = h.mesh.children[name];
          child.kill("SIGKILL");
          await child.waitForExit();
          await child.waitReady(30_000);
        });
        noServerErrors(replies);
        await expectEveryAnswerRecorded(replies);
      }, 120_000);
    }

    it("every keyed retry of an answered request got the first answer: no agent twice", async () => {
      expect(answers.size, JSON.stringify(sent.filter((r) => r.key).slice(0, 3))).toBeGreaterThan(
        0,
      );
      for (const [key, { first, later }] of answers) {
        for (const body of later) expect(body, key).toBe(first);
      }
      // A rerun of an answered create would meet its own agent's name: 409 conflict.
      expect(sent.filter((r) => r.key && r.body?.includes('"code":"CONFLICT"'))).toEqual([]);
    });

    it("SIGTERM does not wait out IDEMPOTENCY_WAIT_MS for a key a crashed gateway held", async () => {
      // The claim of a gateway that died mid-request: in progress, its lease far from running out.
      const key = `crashed-${randomUUID()}`;
      const body = { name: "waits" };
      const fingerprint = requestFingerprint(
        "POST",
        "/api/agents",
        body,
        callerOf({ kind: "client", principalId: "cli_mesh" }),
      );
      await h.db.query(
        `INSERT INTO gateway.idempotency_keys
         (account_id, idempotency_key, fingerprint, state, lease_id, lease_expires_at, created_at, expires_at)
       VALUES ($1, $2, $3, 'in_progress', gen_random_uuid(), now() + interval '1 hour', now(),
               now() + interval '1 day')`,
        [h.accountId, key, fingerprint],
      );
      const waiting = fetch(`${h.url}/v1/api/agents`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "idempotency-key": key,
        },
        body: JSON.stringify(body),
      }).then(
        (r) => r.status,
        () => 0,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const gateway = h.mesh.children.gateway;
      const started = Date.now();
      gateway.kill("SIGTERM");
      const exit = await gateway.waitForExit();
      expect(exit.code).toBe(0);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect([503, 0]).toContain(await waiting);
      await gateway.waitReady(30_000);
    }, 60_000);
  },
);
