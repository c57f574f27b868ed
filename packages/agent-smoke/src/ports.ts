import type { Client } from "@grpc/grpc-js";
import type { callUnary, DependencyCheck, Logger } from "@switchboard/kit";
import type { callcontrol, inventory, messaging, usage, webhook } from "@switchboard/proto";
import type { SmokeFactPublisher } from "./run-fact.js";

/** A backend method, picked from its generated client: `(c) => c.createHold`. */
export type RpcMethod<C extends Client, Req, Res> = (
  client: C,
) => Parameters<typeof callUnary<Req, Res>>[2];

/** What one call carries besides its request: its deadline, the run's request id, its key. */
export interface SmokeCallOptions {
  deadlineMs: number;
  requestId: string;
  idempotencyKey?: string | undefined;
}

/** One backend service as the smoke calls it: through the same gRPC path the public routes take. */
export interface SmokeBackend<C extends Client> {
  call<Req, Res>(
    method: RpcMethod<C, Req, Res>,
    request: Req,
    options: SmokeCallOptions,
  ): Promise<Res>;
}

/** The services the smoke drives, by the key the steps know each by. */
export interface SmokeBackends {
  inventory: SmokeBackend<inventory.InventoryServiceClient>;
  callControl: SmokeBackend<callcontrol.CallControlServiceClient>;
  messaging: SmokeBackend<messaging.MessagingServiceClient>;
  webhook: SmokeBackend<webhook.WebhookServiceClient>;
  usage: SmokeBackend<usage.UsageServiceClient>;
}

/** Verifies usage records against the signing keys the usage service lists, as a client does. */
export type RecordVerifier = (
  keys: readonly usage.PublicKey[],
) => (record: usage.UsageRecord) => Promise<boolean>;

/** The settings of the smoke, as the embedding edge reads them from its configuration. */
export interface SmokeSettings {
  /** SMOKE_TIMEOUT_MS: the whole run, cleanup included. */
  timeoutMs: number;
  /** SMOKE_STEP_TIMEOUT_MS: one step (the call steps get SANDBOX_CALL_SECONDS on top). */
  stepTimeoutMs: number;
  /** SANDBOX_CALL_SECONDS: how long an answered sandbox call lasts. */
  sandboxCallSeconds: number;
  /** SMOKE_MESSAGE_TO: the SMS recipient (delivered on the sandbox; a real handset on an SMSC). */
  messageTo: string;
  /** SMOKE_CALL_TO: the number the smoke calls over a SIP trunk (it must answer). */
  callTo: string | undefined;
}

/**
 * Everything the smoke needs from the process that runs it (the gateway builds these in
 * gateway/src/smoke/gateway-smoke.ts): the backends, its own stores' checks, its settings,
 * how records verify and where the run's usage fact goes. The smoke imports no gateway code.
 */
export interface SmokePorts {
  backends: SmokeBackends;
  settings: SmokeSettings;
  /** GRPC_DEADLINE_MS: the longest any one backend call may take. */
  grpcDeadlineMs: number;
  /** Each side's carrier (undefined: none the edge knows of, e.g. production without CARRIER). */
  carriers: { voice: string | undefined; messaging: string | undefined };
  /** The edge's own stores (postgres, redis when configured): the `gateway` step. */
  gatewayChecks: Record<string, DependencyCheck>;
  /** Whether replies land api.request records (the `gateway` step fails when they do not). */
  recordsOn: boolean;
  verifyRecords: RecordVerifier;
  publishFact: SmokeFactPublisher;
  logger: Logger;
}
