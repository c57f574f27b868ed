import type { Client } from "@grpc/grpc-js";
import { callcontrol, inventory, messaging, usage, webhook } from "@switchboard/proto";
import { callUnary, createClient, createHealthClient } from "@switchboard/kit";
import type { Principal } from "./auth/index.js";

/** The services the gateway calls, by the key it knows them by and their component name. */
export const backendNames = {
  inventory: "inventory",
  usage: "usage",
  messaging: "messaging",
  callControl: "call-control",
  webhook: "webhook",
} as const;

type BackendKey = keyof typeof backendNames;

export type BackendAddresses = Record<BackendKey, string>;

/** A backend service's gRPC client plus its health client (for readiness). */
export interface Backend<C extends Client> {
  name: string;
  client: C;
  health: Client;
}

interface Clients {
  inventory: Backend<inventory.InventoryServiceClient>;
  usage: Backend<usage.UsageServiceClient>;
  messaging: Backend<messaging.MessagingServiceClient>;
  callControl: Backend<callcontrol.CallControlServiceClient>;
  webhook: Backend<webhook.WebhookServiceClient>;
}

export interface Backends extends Clients {
  all(): Backend<Client>[];
  close(): void;
}

export function connectBackends(addresses: BackendAddresses): Backends {
  const connect = <C extends Client>(
    key: BackendKey,
    Constructor: Parameters<typeof createClient<C>>[0],
  ): Backend<C> => ({
    name: backendNames[key],
    client: createClient(Constructor, addresses[key]),
    health: createHealthClient(addresses[key]),
  });
  const clients: Clients = {
    inventory: connect("inventory", inventory.InventoryServiceClient),
    usage: connect("usage", usage.UsageServiceClient),
    messaging: connect("messaging", messaging.MessagingServiceClient),
    callControl: connect("callControl", callcontrol.CallControlServiceClient),
    webhook: connect("webhook", webhook.WebhookServiceClient),
  };
  const all: Backend<Client>[] = Object.values(clients);
  return {
    ...clients,
    all: () => all,
    close: () => {
      for (const backend of all) {
        backend.client.close();
        backend.health.close();
      }
    },
  };
}

export interface CallOptions {
  deadlineMs: number;
  idempotencyKey?: string | undefined;
  requestId: string;
  /** The caller: its account and id go into the call's internal credential. */
  principal?: Principal | null | undefined;
}

/** Calls a backend method with the request's deadline and metadata. */
export function call<C extends Client, Req, Res>(
  backend: Backend<C>,
  method: (client: C) => Parameters<typeof callUnary<Req, Res>>[2],
  request: Req,
  options: CallOptions,
): Promise<Res> {
  return callUnary(backend.name, backend.client, method(backend.client), request, {
    deadlineMs: options.deadlineMs,
    metadata: { "idempotency-key": options.idempotencyKey, "x-request-id": options.requestId },
    actingFor: {
      accountId: options.principal?.accountId,
      principal: options.principal?.principalId ?? "gateway",
    },
  });
}
