import type { Request } from "express";
import type { z } from "zod";
import { DomainError } from "@switchboard/kit";
import { checkQueryText, pathParamsAreText } from "./text-safety.js";
import { parseInput } from "./validation.js";

/** The schemas a route checks its inputs with. */
export interface InputSchemas<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  params?: P;
  query?: Q;
  body?: B;
  /** The handler checks the body itself (it is passed on as parsed). */
  handlerValidatesBody?: boolean;
}

/** The path parameters, query and body, each checked against its schema (422, or 404 for a path). */
export function readInputs<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  schemas: InputSchemas<P, Q, B>,
  req: Request,
): { params: z.infer<P>; query: z.infer<Q>; body: z.infer<B> } {
  let params: z.infer<P>;
  try {
    if (!pathParamsAreText(req.params)) throw new Error("not text");
    params = parseInput(schemas.params, req.params, "params");
  } catch {
    // A malformed id cannot name an existing resource.
    throw new DomainError("not-found", "the resource was not found");
  }
  checkQueryText(req.query as Record<string, unknown>);
  const query = parseInput(schemas.query, { ...(req.query as object) }, "query");
  const body =
    schemas.body && !schemas.handlerValidatesBody
      ? parseInput(schemas.body, req.body ?? {}, "body")
      : req.body;
  return { params, query, body };
}
