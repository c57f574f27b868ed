import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, dependencyFailure, toGrpcError, type Pool } from "../src/index.js";
import { createRealTestDatabase, type TestDatabase } from "../src/testing.js";

/** The failure a real pool gives, caught. */
const failureOf = (work: Promise<unknown>) =>
  work.then(
    () => {
      throw new Error("expected a failure");
    },
    (error: unknown) => error,
  );

/**
 * What a database that cannot serve looks like from a real pool, and what it answers: 503
 * `service-unavailable` with Retry-After (gRPC UNAVAILABLE) when it is down, unreachable or out
 * of connections, 504 `upstream-timeout` when a statement ran past its deadline; never masked
 * as `internal` (docs/api.md, 503).
 */
describe("dependency failures of PostgreSQL", () => {
  let database: TestDatabase;
  let pool: Pool;
  beforeAll(async () => {
    database = await createRealTestDatabase("dependency_failure");
    pool = createPool(database.url, { max: 1, statementTimeoutMs: 300 });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("a pool whose connections are all busy past the wait: 503 with Retry-After, gRPC UNAVAILABLE", async () => {
    const held = await pool.connect();
    try {
      const error = await failureOf(pool.query("SELECT 1"));
      expect(dependencyFailure(error)).toMatchObject({
        kind: "service-unavailable",
        meta: { retryAfter: 1 },
      });
      expect(toGrpcError(error).code).toBe(status.UNAVAILABLE);
    } finally {
      held.release();
    }
  });

  it("a server that refuses connections: 503", async () => {
    const closed = createPool("postgres://postgres@127.0.0.1:1/none", { statementTimeoutMs: 300 });
    try {
      const error = await failureOf(closed.query("SELECT 1"));
      expect(dependencyFailure(error)?.kind).toBe("service-unavailable");
      expect(toGrpcError(error).code).toBe(status.UNAVAILABLE);
    } finally {
      await closed.end();
    }
  });

  it("a statement past its deadline: cancelled by the server, 504", async () => {
    const error = await failureOf(pool.query("SELECT pg_sleep(2)"));
    expect(dependencyFailure(error)?.kind).toBe("upstream-timeout");
    expect(toGrpcError(error).code).toBe(status.DEADLINE_EXCEEDED);
  });

  it("anything else stays masked as internal", () => {
    expect(dependencyFailure(new Error("a bug"))).toBeUndefined();
    expect(toGrpcError(new Error("a bug")).code).toBe(status.INTERNAL);
  });
});
