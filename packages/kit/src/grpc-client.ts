import {
  credentials,
  Metadata,
  status,
  type CallOptions,
  type Client,
  type ClientReadableStream,
  type ClientUnaryCall,
  type ServiceError,
} from "@grpc/grpc-js";
import { fromGrpcError } from "./grpc-errors.js";
import { grpcClientCredentials, grpcTlsChannelOptions } from "./grpc-tls.js";
import { CREDENTIAL_METADATA, mintInternalCredential } from "./internal-credential.js";
import { traceClientInterceptor } from "./telemetry/grpc-spans.js";
import { startGrpcClientTimer } from "./metrics/grpc.js";

/** Retries UNAVAILABLE only, through the service config (docs/architecture.md rule 5). */
export function clientChannelOptions(serviceName: string) {
  return {
    "grpc.enable_retries": 1,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
    "grpc.service_config": JSON.stringify({
      loadBalancingConfig: [{ round_robin: {} }],
      methodConfig: [
        {
          name: [{ service: serviceName }],
          retryPolicy: {
            maxAttempts: 3,
            initialBackoff: "0.05s",
            maxBackoff: "0.5s",
            backoffMultiplier: 2,
            retryableStatusCodes: ["UNAVAILABLE"],
          },
        },
      ],
    }),
  };
}

type ClientConstructor<C extends Client> = new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
  options: Record<string, unknown>,
) => C;

export function createClient<C extends Client>(
  Constructor: ClientConstructor<C> & { serviceName: string },
  address: string,
): C {
  return new Constructor(address, grpcClientCredentials(), {
    ...clientChannelOptions(Constructor.serviceName),
    ...grpcTlsChannelOptions(),
    interceptors: [traceClientInterceptor],
  });
}

export interface CallSettings {
  /** Milliseconds until the deadline. Every call has one. */
  deadlineMs?: number;
  metadata?: Record<string, string | undefined>;
  /**
   * Who the call acts for, in its internal credential: by default the request's `accountId`
   * and the calling process (`platform`).
   */
  actingFor?: { accountId?: string | undefined; principal?: string | undefined };
}

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

/** The call's metadata: `settings.metadata` and the internal credential it acts under. */
async function callMetadata(
  service: string,
  request: unknown,
  settings: CallSettings,
): Promise<Metadata> {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(settings.metadata ?? {})) {
    if (value !== undefined) metadata.set(key, value);
  }
  const requestAccount = (request as { accountId?: unknown }).accountId;
  const token = await mintInternalCredential({
    audience: service,
    accountId:
      settings.actingFor?.accountId ?? (typeof requestAccount === "string" ? requestAccount : ""),
    principal: settings.actingFor?.principal ?? "platform",
  });
  metadata.set(CREDENTIAL_METADATA, token);
  return metadata;
}

/**
 * Calls a unary method with a deadline and returns a promise; failures come back as the
 * DomainError the service raised (or service-unavailable / upstream-timeout / internal).
 */
export function callUnary<Req, Res>(
  service: string,
  client: Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  settings: CallSettings = {},
): Promise<Res> {
  const deadline = new Date(Date.now() + (settings.deadlineMs ?? 5_000));
  return callMetadata(service, request, settings).then((metadata) => {
    const finish = startGrpcClientTimer(
      (method as { path?: string }).path ?? `/${service}/unknown`,
    );
    return new Promise<Res>((resolve, reject) => {
      method.call(client, request, metadata, { deadline }, (error, response) => {
        finish(error ? error.code : status.OK);
        if (error) reject(fromGrpcError(error, service));
        else resolve(response);
      });
    });
  });
}

type ServerStreamMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options?: Partial<CallOptions>,
) => ClientReadableStream<Res>;

/**
 * Opens a server-streaming call under the internal credential (as `callUnary`; no deadline: it
 * lasts until either side ends it).
 */
export async function openServerStream<Req, Res>(
  service: string,
  client: Client,
  method: ServerStreamMethod<Req, Res>,
  request: Req,
  settings: Omit<CallSettings, "deadlineMs"> = {},
): Promise<ClientReadableStream<Res>> {
  const metadata = await callMetadata(service, request, settings);
  return method.call(client, request, metadata);
}

/**
 * Holds a server-streaming call open: `data` hears each message; when the call ends or fails
 * (or cannot be opened), `ended` hears it and the call is opened again `reopenMs` later, until
 * `stop`.
 */
export function holdServerStream<Req, Res>(
  service: string,
  client: Client,
  method: ServerStreamMethod<Req, Res>,
  request: Req,
  handlers: { data(message: Res): void; ended(error?: Error): void },
  reopenMs = 1_000,
): { stop(): void } {
  let stopped = false;
  let stream: ClientReadableStream<Res> | undefined;
  let retry: NodeJS.Timeout | undefined;

  const ended = (error?: Error) => {
    stream = undefined;
    handlers.ended(error);
    if (stopped || retry) return;
    retry = setTimeout(open, reopenMs);
    retry.unref();
  };
  const open = () => {
    retry = undefined;
    if (stopped) return;
    openServerStream(service, client, method, request).then((opened) => {
      if (stopped) {
        opened.cancel();
        return;
      }
      stream = opened;
      opened.on("data", (message: Res) => handlers.data(message));
      opened.on("error", (error: Error) => stream === opened && ended(error));
      opened.on("end", () => stream === opened && ended());
    }, ended);
  };
  open();

  return {
    stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      stream?.cancel();
    },
  };
}
