import type { Client } from "@grpc/grpc-js";
import { DomainError } from "@switchboard/kit";
import type { Principal } from "./auth/index.js";
import {
  call,
  perBackend,
  type Backend,
  type BackendKey,
  type Backends,
  type CallOptions,
} from "./backends.js";

/** A backend method, picked from its client: `(c) => c.getHold`. */
export type RpcMethod<C extends Client, Req, Res> = Parameters<typeof call<C, Req, Res>>[1];

type BackendName = BackendKey;
type ClientOf<Name extends BackendName> = Backends[Name] extends Backend<infer C> ? C : never;

/** One backend's calls for the caller's account: the request names everything but the account. */
export type AccountCalls<C extends Client> = <Req extends { accountId: string }, Res>(
  method: RpcMethod<C, Req, Res>,
  request: NoInfer<Omit<Req, "accountId">>,
) => Promise<Res>;

/** One backend's calls for nobody's account (public routes). */
export type PublicCalls<C extends Client> = <Req, Res>(
  method: RpcMethod<C, Req, Res>,
  request: NoInfer<Req>,
) => Promise<Res>;

/** Every backend's calls for the caller's account: `rpc.inventory((c) => c.getHold, { holdId })`. */
export type AccountRpc = { [Name in BackendName]: AccountCalls<ClientOf<Name>> };

/** Every backend's calls for a public route. */
export type PublicRpc = { [Name in BackendName]: PublicCalls<ClientOf<Name>> };

/** The request a backend call is made for: its id (the trace) and its Idempotency-Key. */
export interface RpcRequest {
  requestId: string;
  idempotencyKey: string | undefined;
}

/** Binds each request's backend calls to its caller, deadline, request id and Idempotency-Key. */
export interface RequestRpc {
  /** Calls for an authenticated caller: its account, and its id in the internal credential. */
  caller(principal: Principal, request: RpcRequest): AccountRpc;
  /** Calls for a public route: no account. */
  anonymous(request: RpcRequest): PublicRpc;
}

/** The request's calls to the gateway's backends, each with GRPC_DEADLINE_MS. */
export function requestRpc(backends: Backends, deadlineMs: number): RequestRpc {
  const optionsFor = (request: RpcRequest, principal: Principal | null): CallOptions => ({
    deadlineMs,
    requestId: request.requestId,
    idempotencyKey: request.idempotencyKey,
    principal,
  });
  return {
    caller: (principal, request) => {
      const options = optionsFor(request, principal);
      const { accountId } = principal;
      const bind =
        <C extends Client>(backend: Backend<C>): AccountCalls<C> =>
        <Req extends { accountId: string }, Res>(
          method: RpcMethod<C, Req, Res>,
          fields: Omit<Req, "accountId">,
        ) =>
          call(backend, method, { ...fields, accountId } as Req, options);
      return perBackend<AccountRpc>((key) => bind(backends[key] as Backend<Client>));
    },
    anonymous: (request) => {
      const options = optionsFor(request, null);
      const bind =
        <C extends Client>(backend: Backend<C>): PublicCalls<C> =>
        (method, fields) =>
          call(backend, method, fields, options);
      return perBackend<PublicRpc>((key) => bind(backends[key] as Backend<Client>));
    },
  };
}

const refuse = () => Promise.reject(new DomainError("internal", "no backends are connected"));
const refusing = perBackend<AccountRpc & PublicRpc>(() => refuse);

/** For an app without backends (tests, benchmarks): every call fails. */
export const withoutBackends: RequestRpc = {
  caller: () => refusing,
  anonymous: () => refusing,
};
