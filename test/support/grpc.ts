import type { CallOptions, ClientUnaryCall, Metadata, ServiceError } from "@grpc/grpc-js";
import { DomainError } from "@switchboard/kit";

/** A unary method of a generated gRPC client: `h.call(h.client.getHold, {...})`. */
export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

/** The DomainError a call failed with (fails the test when it succeeded). */
export async function failure(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

/** Backend addresses nothing listens on (the discard port), for a gateway config in a unit test. */
export const unreachableBackends = {
  INVENTORY_ADDR: "127.0.0.1:9",
  USAGE_ADDR: "127.0.0.1:9",
  MESSAGING_ADDR: "127.0.0.1:9",
  CALL_CONTROL_ADDR: "127.0.0.1:9",
  WEBHOOK_ADDR: "127.0.0.1:9",
};

/** The problem kind a synchronous call throws: `none` when it returns, `other` for a non-DomainError. */
export const kindOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    // By shape, not instanceof: the kit's own tests load it from its sources.
    const kind = (error as { kind?: unknown } | null)?.kind;
    return typeof kind === "string" ? kind : "other";
  }
  return "none";
};
