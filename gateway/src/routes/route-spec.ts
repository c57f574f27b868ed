import type { Request } from "express";
import type { z } from "zod";
import type { ProblemKind } from "@switchboard/kit";
import type { Principal, Scope } from "../auth/index.js";

/** What a handler returns; the pipeline turns it into the HTTP response. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Defaults to application/json. */
  mediaType?: string;
}

export interface HandlerContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Null only on public routes. */
  principal: Principal | null;
  requestId: string;
  idempotencyKey: string | undefined;
  req: Request;
}

export interface SuccessSpec {
  status: number;
  description: string;
  schema?: z.ZodType;
  mediaType?: string;
  /** Response header names documented beside the common ones (e.g. Location, Link). */
  headers?: string[];
}

/**
 * One row of the route table. Express routes, validation, authentication and the OpenAPI
 * document are all built from these rows: nothing is described twice.
 */
export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: "get" | "post" | "patch" | "delete";
  /** OpenAPI-style template without the version: `/api/numbers/holds/{hold_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** The one permission the route needs; null for the public routes. */
  scope: Scope | null;
  params?: P;
  query?: Q;
  body?: B;
  /** Request body media type; JSON unless said otherwise. */
  bodyMediaType?: "application/json" | "application/x-www-form-urlencoded";
  /**
   * The handler answers for its own body (the OAuth token endpoint's RFC 6749 errors): the body
   * schema documents it but is not enforced, and another media type is left unparsed, not 415.
   */
  handlerValidatesBody?: boolean;
  success: SuccessSpec;
  /** Problem kinds the operation itself can answer with (the common ones are added). */
  problems: ProblemKind[];
  /** Marks a listing that follows the shared pagination rules. */
  paginated?: boolean;
  /** Examples for the reference: a request body and the success response. */
  examples?: { request?: unknown; response?: unknown };
  handler: (context: HandlerContext<z.infer<P>, z.infer<Q>, z.infer<B>>) => Promise<Reply>;
}

/** Keeps the handler's context typed by the row's schemas. */
export const defineRoute = <P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec => spec as unknown as RouteSpec;
