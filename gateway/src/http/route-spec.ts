import type { Request } from "express";
import type { z } from "zod";
import { DomainError, type ProblemKind } from "@switchboard/kit";
import type { Principal, Scope } from "../auth/index.js";
import type { AccountRpc, PublicRpc, RequestRpc } from "../backend-rpc.js";
import { readInputs } from "./request-inputs.js";

/** What a handler returns; the pipeline turns it into the HTTP response. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Defaults to application/json. */
  mediaType?: string;
}

/** The parameter names of a path template: `/holds/{hold_id}/assign` → `"hold_id"`. */
type ParamNames<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}`
  ? Name | ParamNames<Rest>
  : never;

/** A path template's parameters, each a string. */
export type PathParams<Path extends string> = { [Name in ParamNames<Path>]: string };

interface RequestContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  requestId: string;
  idempotencyKey: string | undefined;
  req: Request;
}

/** What the handler of a route with a scope sees: the caller, and backend calls for its account. */
export interface CallerContext<P, Q, B> extends RequestContext<P, Q, B> {
  principal: Principal;
  rpc: AccountRpc;
}

/** What the handler of a public route sees: nobody authenticated, calls for no account. */
export interface PublicContext<P, Q, B> extends RequestContext<P, Q, B> {
  principal: null;
  rpc: PublicRpc;
}

export interface SuccessSpec {
  status: number;
  description: string;
  schema?: z.ZodType;
  mediaType?: string;
  /** Response header names documented beside the common ones (e.g. Location, Link). */
  headers?: string[];
}

/** Everything about a route but its scope and handler. */
interface RouteDescription<Path extends string, Q extends z.ZodType, B extends z.ZodType> {
  method: "get" | "post" | "patch" | "delete";
  /** OpenAPI-style template without the version: `/api/numbers/holds/{hold_id}`. */
  path: Path;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Checks the path's parameters (a malformed one is 404). */
  params?: z.ZodType<PathParams<Path>>;
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
  /**
   * The reply goes out even when its usage record cannot be stored (the record is then lost):
   * only for the public health, which is how a caller learns that the database is down.
   */
  answersWithoutRecord?: boolean;
  /**
   * Examples for the reference: a request body, the success response, and the query the code
   * samples send.
   */
  examples?: { request?: unknown; response?: unknown; query?: Record<string, string | number> };
}

export interface ScopedRoute<
  Path extends string,
  Q extends z.ZodType,
  B extends z.ZodType,
> extends RouteDescription<Path, Q, B> {
  /** The one permission the route needs. */
  scope: Scope;
  handler: (context: CallerContext<PathParams<Path>, z.infer<Q>, z.infer<B>>) => Promise<Reply>;
}

interface PublicRoute<
  Path extends string,
  Q extends z.ZodType,
  B extends z.ZodType,
> extends RouteDescription<Path, Q, B> {
  scope: null;
  handler: (context: PublicContext<PathParams<Path>, z.infer<Q>, z.infer<B>>) => Promise<Reply>;
}

/** A route as it is written: its handler's context is typed by its path, schemas and scope. */
export type RouteDefinition<Path extends string, Q extends z.ZodType, B extends z.ZodType> =
  ScopedRoute<Path, Q, B> | PublicRoute<Path, Q, B>;

/** What the pipeline hands a route to run it. */
export interface RouteRequest {
  req: Request;
  /** Set by authentication on every route with a scope. */
  principal: Principal | null;
  idempotencyKey: string | undefined;
  rpc: RequestRpc;
}

/**
 * One row of the route table. Express routes, validation, authentication and the OpenAPI
 * document are all built from these rows: nothing is described twice.
 */
export interface RouteSpec extends RouteDescription<string, z.ZodType, z.ZodType> {
  /** The one permission the route needs; null for the public routes. */
  scope: Scope | null;
  /** Checks the request's inputs against the row's schemas and runs its handler. */
  run(request: RouteRequest): Promise<Reply>;
}

/** A row of the route table from a route whose handler is typed by its path, schemas and scope. */
export function defineRoute<Path extends string, Q extends z.ZodType, B extends z.ZodType>(
  route: RouteDefinition<Path, Q, B>,
): RouteSpec {
  return { ...route, run: (request) => run(route, request) };
}

async function run<Path extends string, Q extends z.ZodType, B extends z.ZodType>(
  route: RouteDefinition<Path, Q, B>,
  { req, principal, idempotencyKey, rpc }: RouteRequest,
): Promise<Reply> {
  const inputs = readInputs(route, req);
  const request = { requestId: req.requestId, idempotencyKey };
  const context = { ...inputs, ...request, req };
  if (route.scope === null) {
    return route.handler({ ...context, principal: null, rpc: rpc.anonymous(request) });
  }
  if (!principal) {
    throw new DomainError("internal", `${route.operationId} ran without authentication`);
  }
  return route.handler({ ...context, principal, rpc: rpc.caller(principal, request) });
}
