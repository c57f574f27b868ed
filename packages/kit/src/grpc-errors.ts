import { Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { DomainError, isProblemKind, type DomainErrorMeta, type ProblemKind } from "./errors.js";

/** The metadata entry that carries a DomainError across a gRPC boundary. */
const PROBLEM_KEY = "switchboard-problem-bin";

const grpcCodeByStatus: Record<number, status> = {
  400: status.INVALID_ARGUMENT,
  401: status.UNAUTHENTICATED,
  403: status.PERMISSION_DENIED,
  404: status.NOT_FOUND,
  409: status.FAILED_PRECONDITION,
  422: status.INVALID_ARGUMENT,
  429: status.RESOURCE_EXHAUSTED,
  503: status.UNAVAILABLE,
  504: status.DEADLINE_EXCEEDED,
};

interface WireProblem {
  kind: ProblemKind;
  detail: string;
  meta: DomainErrorMeta;
}

/** Server side: turns any thrown value into a gRPC error. Unknown errors are masked. */
export function toGrpcError(error: unknown): Partial<ServiceError> {
  if (error instanceof DomainError) {
    const metadata = new Metadata();
    const wire: WireProblem = { kind: error.kind, detail: error.detail, meta: error.meta };
    metadata.set(PROBLEM_KEY, Buffer.from(JSON.stringify(wire)));
    return {
      code: grpcCodeByStatus[error.status] ?? status.UNKNOWN,
      details: error.detail,
      metadata,
    };
  }
  return { code: status.INTERNAL, details: "internal error", metadata: new Metadata() };
}

const isServiceError = (error: unknown): error is ServiceError =>
  typeof error === "object" && error !== null && "code" in error && "metadata" in error;

/** Client side: turns a gRPC failure back into the DomainError the service raised. */
export function fromGrpcError(error: unknown, service: string): DomainError {
  if (!isServiceError(error)) {
    return new DomainError("internal", "internal error", {}, { cause: error });
  }
  const raw = error.metadata?.get(PROBLEM_KEY)[0];
  if (raw !== undefined) {
    try {
      const wire = JSON.parse(Buffer.from(raw as Buffer).toString("utf8")) as WireProblem;
      if (isProblemKind(wire.kind)) return new DomainError(wire.kind, wire.detail, wire.meta ?? {});
    } catch {
      // fall through to the status mapping
    }
  }
  switch (error.code) {
    case status.UNAVAILABLE:
    case status.CANCELLED:
      return new DomainError(
        "service-unavailable",
        `the ${service} service is unavailable`,
        { retryAfter: 1 },
        { cause: error },
      );
    case status.DEADLINE_EXCEEDED:
      return new DomainError(
        "upstream-timeout",
        `the ${service} service did not answer in time`,
        {},
        { cause: error },
      );
    default:
      return new DomainError("internal", "internal error", {}, { cause: error });
  }
}
