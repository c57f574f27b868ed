import type { Request, Response } from "express";
import type { Principal } from "../auth/index.js";
import type { RequestRpc } from "../backend-rpc.js";
import type { Reply, RouteSpec } from "./route-spec.js";

/** What every stage of a request sees. Stages may set response headers on `res`. */
export interface Exchange {
  route: RouteSpec;
  req: Request;
  res: Response;
  principal: Principal | null;
  idempotencyKey: string | undefined;
}

/** One policy around the operation (authentication, rate limit, idempotency, records…). */
export type Stage = (exchange: Exchange, next: () => Promise<Reply>) => Promise<Reply>;

/** Runs the stages in order around the operation: the route, with the request's backend calls. */
export function runStages(stages: Stage[], exchange: Exchange, rpc: RequestRpc): Promise<Reply> {
  const operate = async () => {
    const { route, req, principal, idempotencyKey } = exchange;
    return route.run({ req, principal, idempotencyKey, rpc });
  };
  const step = (index: number): Promise<Reply> => {
    const stage = stages[index];
    return stage ? stage(exchange, () => step(index + 1)) : operate();
  };
  return step(0);
}

export function sendReply(res: Response, reply: Reply): void {
  res.status(reply.status);
  if (reply.headers) res.set(reply.headers);
  if (reply.body === undefined) {
    res.end();
    return;
  }
  if (typeof reply.body === "string" && reply.mediaType) {
    res.type(reply.mediaType).send(reply.body);
    return;
  }
  res.type(reply.mediaType ?? "application/json").send(JSON.stringify(reply.body));
}
