import { describe, expect, it } from "vitest";
import { toProblem } from "../src/http/problem.js";

const context = {
  requestId: "req_01j00000000000000000000000",
  errorsUrl: "https://api.test/v1/errors",
};

/**
 * The gateway's own database failing (the per-request client read, the Idempotency-Key claim,
 * the reply's commit) is the platform's condition, answered 503 with Retry-After or 504 — as
 * node-postgres reports it, never masked as 500 (an embedded burst once gave 39 × 500 when its
 * pool's wait ran out).
 */
describe("problems of the gateway's own dependencies", () => {
  const cases: [string, unknown, number][] = [
    ["a pool wait past its limit", new Error("timeout exceeded when trying to connect"), 503],
    ["a connection lost", new Error("Connection terminated unexpectedly"), 503],
    [
      "a refused connection",
      Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
      503,
    ],
    [
      "a server shutting down",
      Object.assign(new Error("terminating connection"), { code: "57P01" }),
      503,
    ],
    ["a statement without an answer", new Error("Query read timeout"), 503],
    [
      "a statement cancelled at its deadline",
      Object.assign(new Error("canceling statement"), { code: "57014" }),
      504,
    ],
  ];
  it.each(cases)("%s", (_name, error, expected) => {
    const problem = toProblem(error, context);
    expect(problem.status).toBe(expected);
    expect(problem.body.detail).not.toMatch(/ECONNREFUSED|terminat|timeout exceeded|canceling/);
    if (expected === 503) expect(problem.headers["Retry-After"]).toBe("1");
  });

  it("anything else is still 500 internal, with nothing of the error shown", () => {
    const problem = toProblem(new Error("SELECT secret FROM x"), context);
    expect(problem.status).toBe(500);
    expect(JSON.stringify(problem.body)).not.toContain("SELECT");
  });
});
