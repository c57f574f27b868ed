import { Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { rpcErrorDetails, rpcStatus } from "@switchboard/proto";
import { dependencyFailure } from "./dependency-failure.js";
import {
  DomainError,
  isProblemKind,
  problems,
  type DomainErrorMeta,
  type FieldError,
  type ProblemKind,
} from "./errors.js";

/**
 * A DomainError crosses a gRPC boundary as the standard error model: a `google.rpc.Status` in
 * the `grpc-status-details-bin` trailer, holding an `ErrorInfo` (reason: the problem kind) and,
 * for field errors, a `BadRequest`.
 */
const STATUS_DETAILS_KEY = "grpc-status-details-bin";
const ERROR_DOMAIN = "switchboard";
const typeUrl = (name: string) => `type.googleapis.com/google.rpc.${name}`;
const ERROR_INFO_URL = typeUrl("ErrorInfo");
const BAD_REQUEST_URL = typeUrl("BadRequest");

/** The gRPC status code of each problem kind. */
const grpcCodeOf = (kind: ProblemKind): status => problems[kind].grpc;

const serverFaultCodes: ReadonlySet<status> = new Set([
  status.UNKNOWN,
  status.INTERNAL,
  status.UNAVAILABLE,
  status.DEADLINE_EXCEEDED,
  status.DATA_LOSS,
]);

/** True when a problem kind is the server's fault, not the caller's. */
export const isServerFaultKind = (kind: ProblemKind): boolean =>
  serverFaultCodes.has(grpcCodeOf(kind));

/** ErrorInfo metadata: the DomainError's meta (but field errors) as strings. */
function metaToStrings(meta: DomainErrorMeta): Record<string, string> {
  const strings: Record<string, string> = {};
  if (meta.retryAfter !== undefined) strings.retryAfter = String(meta.retryAfter);
  if (meta.extensions !== undefined) strings.extensions = JSON.stringify(meta.extensions);
  if (meta.headers !== undefined) strings.headers = JSON.stringify(meta.headers);
  return strings;
}

function metaFromStrings(strings: Record<string, string>, errors: FieldError[]): DomainErrorMeta {
  const meta: DomainErrorMeta = {};
  if (errors.length > 0) meta.errors = errors;
  if (strings.retryAfter !== undefined) meta.retryAfter = Number(strings.retryAfter);
  if (strings.extensions !== undefined) meta.extensions = JSON.parse(strings.extensions);
  if (strings.headers !== undefined) meta.headers = JSON.parse(strings.headers);
  return meta;
}

function encodeStatus(error: DomainError, code: status): Buffer {
  const errorInfo = Buffer.from(
    rpcErrorDetails.ErrorInfo.encode({
      reason: error.kind,
      domain: ERROR_DOMAIN,
      metadata: metaToStrings(error.meta),
    }).finish(),
  );
  const details = [{ typeUrl: ERROR_INFO_URL, value: errorInfo }];
  if (error.meta.errors?.length) {
    const badRequest = Buffer.from(
      rpcErrorDetails.BadRequest.encode({
        fieldViolations: error.meta.errors.map((e) => ({
          field: e.pointer,
          description: e.detail,
        })),
      }).finish(),
    );
    details.push({ typeUrl: BAD_REQUEST_URL, value: badRequest });
  }
  return Buffer.from(rpcStatus.Status.encode({ code, message: error.detail, details }).finish());
}

/** The DomainError a `google.rpc.Status` carries, if it is one of ours. */
function decodeStatus(raw: Buffer): DomainError | undefined {
  const decoded = rpcStatus.Status.decode(raw);
  const infoDetail = decoded.details.find((d) => d.typeUrl === ERROR_INFO_URL);
  if (infoDetail === undefined) return undefined;
  const info = rpcErrorDetails.ErrorInfo.decode(infoDetail.value);
  if (info.domain !== ERROR_DOMAIN || !isProblemKind(info.reason)) return undefined;
  const badRequest = decoded.details.find((d) => d.typeUrl === BAD_REQUEST_URL);
  const errors = badRequest
    ? rpcErrorDetails.BadRequest.decode(badRequest.value).fieldViolations.map((v) => ({
        pointer: v.field,
        detail: v.description,
      }))
    : [];
  return new DomainError(info.reason, decoded.message, metaFromStrings(info.metadata, errors));
}

/**
 * Server side: turns any thrown value into a gRPC error. A database that is down or past its
 * deadline is `service-unavailable` or `upstream-timeout`; other unknown errors are masked.
 */
export function toGrpcError(thrown: unknown): Partial<ServiceError> {
  const error = dependencyFailure(thrown) ?? thrown;
  if (error instanceof DomainError) {
    const code = grpcCodeOf(error.kind);
    const metadata = new Metadata();
    metadata.set(STATUS_DETAILS_KEY, encodeStatus(error, code));
    return { code, details: error.detail, metadata };
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
  const raw = error.metadata?.get(STATUS_DETAILS_KEY)[0];
  if (raw !== undefined) {
    try {
      const domain = decodeStatus(Buffer.from(raw as Buffer));
      if (domain !== undefined) return domain;
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
