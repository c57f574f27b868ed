import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DomainError } from "@switchboard/kit";
import type { Principal } from "../src/auth/index.js";
import { withoutBackends, type RequestRpc } from "../src/backend-rpc.js";
import { idParam, limitParam } from "../src/schemas/common.js";
import { ok } from "../src/routes/replies.js";
import { defineRoute, type RouteRequest } from "../src/http/route-spec.js";

const caller: Principal = {
  accountId: "acct_a",
  principalId: "cli_a",
  kind: "client",
  scopes: new Set(["numbers:read"]),
};

const holdId = "hld_01jd2k8w7c3q9v0m5n6p7r8s9t";

/** Records whom each request's calls were bound to. */
function recordingRpc() {
  const bound: { principal: Principal | null; requestId: string; key: string | undefined }[] = [];
  const rpc: RequestRpc = {
    caller: (principal, request) => {
      bound.push({ principal, requestId: request.requestId, key: request.idempotencyKey });
      return withoutBackends.caller(principal, request);
    },
    anonymous: (request) => {
      bound.push({ principal: null, requestId: request.requestId, key: request.idempotencyKey });
      return withoutBackends.anonymous(request);
    },
  };
  return { rpc, bound };
}

const request = (
  fields: {
    params?: Request["params"];
    query?: Request["query"];
    principal?: Principal | null;
  },
  rpc: RequestRpc,
): RouteRequest => ({
  // Only what a route reads of the request.
  req: {
    params: fields.params ?? {},
    query: fields.query ?? {},
    body: {},
    requestId: "req_1",
  } as unknown as Request,
  principal: fields.principal ?? null,
  idempotencyKey: "key-1",
  rpc,
});

const getHold = defineRoute({
  method: "get",
  path: "/api/test/holds/{hold_id}",
  operationId: "getTestHold",
  summary: "test",
  tag: "Test",
  scope: "numbers:read",
  params: idParam("hld", "hold_id"),
  query: z.object({ limit: limitParam }),
  success: { status: 200, description: "ok" },
  problems: [],
  handler: async (ctx) => {
    const id: string = ctx.params.hold_id;
    const limit: number = ctx.query.limit;
    const account: string = ctx.principal.accountId;
    return ok({ id, limit, account });
  },
});

const publicRoute = defineRoute({
  method: "get",
  path: "/api/test/public",
  operationId: "getTestPublic",
  summary: "test",
  tag: "Test",
  scope: null,
  success: { status: 200, description: "ok" },
  problems: [],
  handler: async (ctx) => {
    const nobody: null = ctx.principal;
    return ok({ principal: nobody });
  },
});

describe("defineRoute", () => {
  it("hands the handler parsed inputs, the caller and calls bound to its request", async () => {
    const { rpc, bound } = recordingRpc();
    const reply = await getHold.run(
      request({ params: { hold_id: holdId }, principal: caller }, rpc),
    );
    expect(reply.body).toEqual({ id: holdId, limit: 50, account: "acct_a" });
    expect(bound).toEqual([{ principal: caller, requestId: "req_1", key: "key-1" }]);
  });

  it("answers a malformed path parameter with 404 and an invalid query with 422", async () => {
    const { rpc } = recordingRpc();
    const run = (params: Record<string, string>, query: Record<string, string> = {}) =>
      getHold.run(request({ params, query, principal: caller }, rpc));
    await expect(run({ hold_id: "nope" })).rejects.toMatchObject({ kind: "not-found" });
    await expect(run({ hold_id: holdId }, { limit: "0" })).rejects.toMatchObject({
      kind: "validation-failed",
    });
  });

  it("refuses to run a route with a scope without a principal", async () => {
    const { rpc } = recordingRpc();
    const run = getHold.run(request({ params: { hold_id: holdId } }, rpc));
    await expect(run).rejects.toBeInstanceOf(DomainError);
    await expect(run).rejects.toMatchObject({ kind: "internal" });
  });

  it("runs a public route for nobody", async () => {
    const { rpc, bound } = recordingRpc();
    const reply = await publicRoute.run(request({ principal: caller }, rpc));
    expect(reply.body).toEqual({ principal: null });
    expect(bound).toEqual([{ principal: null, requestId: "req_1", key: "key-1" }]);
  });

  it("types the handler's context by the path, the schemas and the scope", () => {
    defineRoute({
      method: "get",
      path: "/api/test/{id}",
      operationId: "mismatched",
      summary: "test",
      tag: "Test",
      scope: null,
      // @ts-expect-error the schema's parameter is not the path's
      params: idParam("hld", "hold_id"),
      success: { status: 200, description: "ok" },
      problems: [],
      handler: async (ctx) => {
        // @ts-expect-error a public route has no principal
        const account: string = ctx.principal.accountId;
        // @ts-expect-error the path has no such parameter
        return ok({ account, other: ctx.params.other });
      },
    });
    expect(true).toBe(true);
  });
});
