import type { Client } from "@grpc/grpc-js";
import { DomainError } from "@switchboard/kit";
import type { RpcMethod, SmokeBackend } from "./ports.js";

/** Ends a step as `fail` with a detail that is safe to show. */
export class StepFailure extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** Ends a step as `skipped` (nothing to check, or the platform cannot run it). */
export class StepSkipped extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** What a running step may use: its deadline, and gRPC calls and polls bounded by it. */
export interface StepScope {
  /** Epoch milliseconds by which the step must have finished. */
  readonly deadline: number;
  readonly signal: AbortSignal;
  /** What the step is waiting for right now (named in a timeout's detail). */
  waitingFor: string | undefined;
  /** A backend call as the public routes make it, with the step's remaining time as deadline. */
  rpc<C extends Client, Req, Res>(
    backend: SmokeBackend<C>,
    method: RpcMethod<C, Req, Res>,
    request: Req,
    idempotencyKey?: string,
  ): Promise<Res>;
  /** Calls `fetch` until `done` holds (backing off from 100 ms to 500 ms) or time runs out. */
  poll<T>(what: string, fetch: () => Promise<T>, done: (value: T) => boolean): Promise<T>;
}

const minimumRpcMs = 50;

export function createStepScope(options: {
  deadline: number;
  signal: AbortSignal;
  grpcDeadlineMs: number;
  requestId: string;
}): StepScope {
  const { deadline, signal } = options;
  const stopIfOver = () => {
    if (signal.aborted) throw new StepFailure("the step ran out of time");
  };
  const scope: StepScope = {
    deadline,
    signal,
    waitingFor: undefined,
    rpc: (backend, method, request, idempotencyKey) => {
      stopIfOver();
      const left = Math.max(minimumRpcMs, deadline - Date.now());
      return backend.call(method, request, {
        deadlineMs: Math.min(options.grpcDeadlineMs, left),
        requestId: options.requestId,
        idempotencyKey,
      });
    },
    poll: async (what, fetch, done) => {
      scope.waitingFor = what;
      let interval = 100;
      for (;;) {
        stopIfOver();
        const value = await fetch();
        if (done(value)) {
          scope.waitingFor = undefined;
          return value;
        }
        await new Promise((resolve) => setTimeout(resolve, interval));
        interval = Math.min(500, Math.round(interval * 1.5));
      }
    },
  };
  return scope;
}

/** A failed step's detail: the step's own words, or the backend's problem; never internals. */
export function failureDetail(error: unknown): string | undefined {
  if (error instanceof StepFailure) return error.detail;
  if (error instanceof DomainError) return `${error.kind}: ${error.detail}`;
  return undefined;
}
