import type { Request, Response } from "express";
import { DomainError } from "@switchboard/kit";
import type { Principal } from "../auth/index.js";
import type { Reply, RouteSpec } from "../routes/route-spec.js";
import { checkQueryText, pathParamsAreText } from "./text-safety.js";
import { parseInput } from "./validation.js";

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

/** Validates the inputs and runs the route's handler: the innermost stage. */
async function operate(exchange: Exchange): Promise<Reply> {
  const { route, req } = exchange;
  let params: unknown;
  try {
    if (!pathParamsAreText(req.params)) throw new Error("not text");
    params = parseInput(route.params, req.params, "params");
  } catch {
    // A malformed id cannot name an existing resource.
    throw new DomainError("not-found", "the resource was not found");
  }
  checkQueryText(req.query as Record<string, unknown>);
  const query = parseInput(route.query, { ...(req.query as object) }, "query");
  const body =
    route.body && !route.handlerValidatesBody
      ? parseInput(route.body, req.body ?? {}, "body")
      : req.body;
  return route.handler({
    params,
    query,
    body,
    principal: exchange.principal,
    requestId: req.requestId,
    idempotencyKey: exchange.idempotencyKey,
    req,
  });
}

/** Runs the stages in order around the operation. */
export function runStages(stages: Stage[], exchange: Exchange): Promise<Reply> {
  const step = (index: number): Promise<Reply> => {
    const stage = stages[index];
    return stage ? stage(exchange, () => step(index + 1)) : operate(exchange);
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
