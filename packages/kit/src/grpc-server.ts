import {
  Server,
  ServerCredentials,
  status,
  type Metadata,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  type StatusObject,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import type { Logger } from "pino";
import { DomainError } from "./errors.js";
import { isDependencyUnavailable } from "./dependency-failure.js";
import { toGrpcError } from "./grpc-errors.js";
import { traceUnaryCall } from "./telemetry/grpc-spans.js";
import { meteredCallback } from "./metrics/grpc.js";
import {
  CREDENTIAL_METADATA,
  verifyInternalCredential,
  type InternalClaims,
} from "./internal-credential.js";
import { grpcServerCredentials } from "./grpc-tls.js";

/** Keepalive and connection-age settings so clients rebalance across pods (docs/architecture.md rule 5). */
export const serverChannelOptions = {
  "grpc.keepalive_time_ms": 30_000,
  "grpc.keepalive_timeout_ms": 10_000,
  "grpc.keepalive_permit_without_calls": 1,
  "grpc.http2.min_ping_interval_without_data_ms": 10_000,
  "grpc.max_connection_age_ms": 5 * 60_000,
  "grpc.max_connection_age_grace_ms": 30_000,
  "grpc.max_receive_message_length": 4 * 1024 * 1024,
};

export interface CallContext {
  metadata: Metadata;
  /** The verified internal credential: the account and principal the call acts for. */
  credential: InternalClaims;
  /** The `idempotency-key` metadata entry, if the gateway forwarded one. */
  idempotencyKey: string | undefined;
}

/** Adapts an async handler to grpc-js, encoding DomainErrors and masking everything else. */
export function unary<Req, Res>(
  logger: Logger,
  handler: (request: Req, context: CallContext) => Promise<Res>,
) {
  return (call: ServerUnaryCall<Req, Res>, send: sendUnaryData<Res>): void => {
    const callback = meteredCallback(call.getPath(), send);
    const key = call.metadata.get("idempotency-key")[0];
    const context: CallContext = {
      metadata: call.metadata,
      credential: (call as CredentialedCall).credential,
      idempotencyKey: typeof key === "string" && key !== "" ? key : undefined,
    };
    traceUnaryCall(call.getPath(), call.metadata, () => handler(call.request, context)).then(
      (response) => callback(null, response),
      (error: unknown) => {
        if (isDependencyUnavailable(error)) {
          logger.warn({ err: error, method: call.getPath() }, "a dependency is unavailable");
        } else if (!(error instanceof DomainError)) {
          logger.error({ err: error, method: call.getPath() }, "unhandled error in gRPC handler");
        }
        callback(toGrpcError(error) as Parameters<typeof callback>[0]);
      },
    );
  };
}

type CredentialedCall = ServerUnaryCall<unknown, unknown> & { credential: InternalClaims };
type ServedCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>;
/** A unary handler (answers through `send`) or a server-streaming one (no `send`). */
type Handler = (call: ServedCall, send?: sendUnaryData<unknown>) => void;

/** The verified internal credential of a call `startGrpcServer` let through. */
export const credentialOf = (call: ServedCall): InternalClaims =>
  (call as CredentialedCall).credential;

/**
 * docs/architecture.md rule 10: a call runs only with a valid internal credential for this service. The account it
 * acts for comes from the credential: a request naming another account is refused, one naming
 * none gets the credential's.
 */
function guarded(audience: string, handler: Handler): Handler {
  return (call, send) => {
    const refuse = (error: Partial<StatusObject>) =>
      send ? send(error) : call.emit("error", error);
    const token = call.metadata.get(CREDENTIAL_METADATA)[0];
    verifyInternalCredential(typeof token === "string" ? token : undefined, audience).then(
      (claims) => {
        const request = call.request as { accountId?: unknown } | null;
        if (request && typeof request === "object" && typeof request.accountId === "string") {
          if (request.accountId === "") request.accountId = claims.accountId;
          else if (request.accountId !== claims.accountId) {
            refuse({
              code: status.PERMISSION_DENIED,
              details: "the request's account is not the credential's",
            });
            return;
          }
        }
        (call as CredentialedCall).credential = claims;
        handler(call, send);
      },
      () =>
        refuse({
          code: status.UNAUTHENTICATED,
          details: "a valid internal credential is required",
        }),
    );
  };
}

const guardedImplementation = (
  audience: string,
  implementation: UntypedServiceImplementation,
): UntypedServiceImplementation =>
  Object.fromEntries(
    Object.entries(implementation).map(([method, handler]) => [
      method,
      guarded(audience, handler as Handler),
    ]),
  );

export interface GrpcService {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

export interface RunningGrpcServer {
  server: Server;
  port: number;
  health: HealthImplementation;
  /** Marks every service SERVING or NOT_SERVING (readiness). */
  setServing(serving: boolean): void;
  /** NOT_SERVING first, then lets in-flight calls finish up to `graceMs`, then forces. */
  drain(graceMs?: number): Promise<void>;
}

export async function startGrpcServer(options: {
  /** The service's name: the audience its callers' credentials must name. */
  name: string;
  /** Transport credentials (default: TLS from GRPC_TLS_*, else plaintext on loopback). */
  credentials?: ServerCredentials;
  services: GrpcService[];
  host?: string;
  port: number;
  logger: Logger;
}): Promise<RunningGrpcServer> {
  const server = new Server(serverChannelOptions);
  const names = options.services.map((s) => serviceName(s.definition));
  const health = new HealthImplementation(
    Object.fromEntries(["", ...names].map((n) => [n, "NOT_SERVING" as const])),
  );
  health.addToServer(server);
  for (const service of options.services) {
    server.addService(
      service.definition,
      guardedImplementation(options.name, service.implementation),
    );
  }
  const address = `${options.host ?? "127.0.0.1"}:${options.port}`;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, options.credentials ?? grpcServerCredentials(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  // Once draining, nothing (a dependency watch coming back) may report SERVING again.
  let draining = false;
  const setServing = (serving: boolean) => {
    if (draining && serving) return;
    for (const n of ["", ...names]) health.setStatus(n, serving ? "SERVING" : "NOT_SERVING");
  };
  setServing(true);
  options.logger.info({ port, services: names }, `${options.name} gRPC server listening`);
  return {
    server,
    port,
    health,
    setServing,
    drain: async (graceMs = 10_000) => {
      setServing(false);
      draining = true;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/** The fully qualified service name of a ts-proto service definition. */
export function serviceName(definition: ServiceDefinition): string {
  const first = Object.values(definition)[0];
  const path = first?.path ?? "";
  return path.slice(1, path.lastIndexOf("/"));
}
