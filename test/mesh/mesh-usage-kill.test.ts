import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startMeshHarness, type MeshHarness } from "./support/mesh-harness.js";

/**
 * The usage ledger's promise in the mesh: a real SIGKILL of the separate usage process while
 * requests flow through the gateway, a restart, and a count — every request that got a reply
 * has exactly one api.request record, none lost, none twice.
 */
describe("SIGKILL of the usage process under traffic (separate processes, PostgreSQL + Redis)", () => {
  let h: MeshHarness;
  beforeAll(async () => {
    h = await startMeshHarness({
      // The killed process's jobs are taken again once their lock lapses (default 30 s).
      componentEnv: {
        usage: { QUEUE_LOCK_DURATION_MS: "2000", QUEUE_STALLED_INTERVAL_MS: "1000" },
      },
    });
  });
  afterAll(async () => h?.stop());

  it("loses no record and duplicates none when usage is killed and restarted while requests flow", async () => {
    const token = await h.token();
    const ids: string[] = [];
    const statuses = new Map<number, number>();
    const paths = [
      "/v1/api/numbers/search?limit=1",
      "/v1/api/usage/events?limit=1",
      "/v1/api/nothing-here",
      "/api/health",
    ];
    let running = true;
    const client = async (worker: number) => {
      for (let i = 0; running; i += 1) {
        const path = paths[(worker + i) % paths.length]!;
        // Some requests are anonymous (401), recorded against the platform account.
        const response = await h.request(path, {
          token: worker === 0 && i % 5 === 0 ? undefined : token,
        });
        await response.arrayBuffer();
        const id = response.headers.get("x-request-id");
        if (!id) throw new Error(`no X-Request-Id on ${path}`);
        ids.push(id);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    };
    const usage = h.mesh.children.usage;
    const firstPid = usage.pid;
    const traffic = Promise.all(Array.from({ length: 6 }, (_, worker) => client(worker)));
    let beforeKill = 0;
    let afterRestart = 0;
    try {
      await eventually(
        async () => ids.length,
        (n) => n >= 60,
        "traffic to flow",
      );
      beforeKill = ids.length;
      expect(usage.kill("SIGKILL")).toBe(true);
      expect(await usage.waitForExit()).toEqual({ code: null, signal: "SIGKILL" });
      // Listing the ledger while its service is down is refused, and that reply is recorded too.
      const unavailable = await h.request("/v1/api/usage/events?limit=1", { token });
      expect(unavailable.status).toBe(503);
      ids.push(unavailable.headers.get("x-request-id")!);
      await usage.waitReady(30_000);
      expect(usage.pid).not.toBe(firstPid);
      afterRestart = ids.length;
      await eventually(
        async () => ids.length,
        (n) => n >= afterRestart + 60,
        "traffic after",
      );
    } finally {
      running = false;
      await traffic;
    }
    expect(beforeKill).toBeGreaterThan(0);
    expect(ids.length).toBeGreaterThan(afterRestart);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);

    const counts = async () =>
      (
        await h.db.query<{ request_id: string; n: number }>(
          `SELECT request_id, count(*)::int AS n FROM usage.records
            WHERE kind = 'api.request' AND request_id = ANY($1) GROUP BY request_id`,
          [ids],
        )
      ).rows;
    const stored = await eventually(
      counts,
      (rows) => rows.length === ids.length,
      "every record",
      60_000,
    );
    expect(stored.filter((row) => row.n !== 1)).toEqual([]);
    expect(stored.reduce((sum, row) => sum + row.n, 0)).toBe(ids.length);
  });
});
