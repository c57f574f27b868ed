import type { callcontrol } from "@switchboard/proto";
import type { Backend, Backends, CallOptions } from "../backends.js";
import type { HandlerContext, Reply } from "./route-spec.js";

type Ctx = HandlerContext<unknown, unknown, unknown>;

export const noContent: Reply = { status: 204 };

export interface CallResourceContext {
  cc: Backend<callcontrol.CallControlServiceClient>;
  opts(ctx: Ctx): CallOptions;
  accountId(ctx: Ctx): string;
  id(ctx: Ctx, name: string): string;
}

/** What every seat, agent and route handler needs: the backend, call options, the account. */
export function callResourceContext(backends: Backends, deadlineMs: number): CallResourceContext {
  return {
    cc: backends.callControl,
    opts: (ctx) => ({
      deadlineMs,
      requestId: ctx.requestId,
      idempotencyKey: ctx.idempotencyKey,
      principal: ctx.principal,
    }),
    accountId: (ctx) => ctx.principal?.accountId ?? "",
    id: (ctx, name) => (ctx.params as Record<string, string>)[name] ?? "",
  };
}
