import type { Client } from "@grpc/grpc-js";
import { callcontrol, inventory, messaging, usage, webhook } from "@switchboard/proto";
import { callUnary, createClient, createHealthClient } from "@switchboard/kit";
import type { Principal } from "./auth/index.js";

export interface BackendAddresses {
  inventory: string;
  usage: string;
  messaging: string;
  callControl: string;
  webhook: string;
}

/** A backend service's gRPC client plus its health client (for readiness). */
export interface Backend<C extends Client> {
  name: string;
  client: C;
  health: Client;
}

export interface Backends {
  inventory: Backend<inventory.InventoryServiceClient>;
  usage: Backend<usage.UsageServiceClient>;
  messaging: Backend<messaging.MessagingServiceClient>;
  callControl: Backend<callcontrol.CallControlServiceClient>;
  webhook: Backend<webhook.WebhookServiceClient>;
  all(): Backend<Client>[];
  close(): void;
}

export function connectBackends(addresses: BackendAddresses): Backends {
  const inventoryBackend = {
    name: "inventory",
    client: createClient(inventory.InventoryServiceClient, addresses.inventory),
    health: createHealthClient(addresses.inventory),
  };
  const usageBackend = {
    name: "usage",
    client: createClient(usage.UsageServiceClient, addresses.usage),
    health: createHealthClient(addresses.usage),
  };
  const messagingBackend = {
    name: "messaging",
    client: createClient(messaging.MessagingServiceClient, addresses.messaging),
    health: createHealthClient(addresses.messaging),
  };
  const callControlBackend = {
    name: "call-control",
    client: createClient(callcontrol.CallControlServiceClient, addresses.callControl),
    health: createHealthClient(addresses.callControl),
  };
  const webhookBackend = {
    name: "webhook",
    client: createClient(webhook.WebhookServiceClient, addresses.webhook),
    health: createHealthClient(addresses.webhook),
  };
  const all = [
    inventoryBackend,
    usageBackend,
    messagingBackend,
    callControlBackend,
    webhookBackend,
  ];
  return {
    inventory: inventoryBackend,
    usage: usageBackend,
    messaging: messagingBackend,
    callControl: callControlBackend,
    webhook: webhookBackend,
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
