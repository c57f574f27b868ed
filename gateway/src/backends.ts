import type { Client } from "@grpc/grpc-js";
import { inventory } from "@switchboard/proto";
import { callUnary, createClient, createHealthClient } from "@switchboard/kit";

export interface BackendAddresses {
  inventory: string;
}

/** A backend service's gRPC client plus its health client (for readiness). */
export interface Backend<C extends Client> {
  name: string;
  client: C;
  health: Client;
}

export interface Backends {
  inventory: Backend<inventory.InventoryServiceClient>;
  all(): Backend<Client>[];
  close(): void;
}

export function connectBackends(addresses: BackendAddresses): Backends {
  const inventoryBackend = {
    name: "inventory",
    client: createClient(inventory.InventoryServiceClient, addresses.inventory),
    health: createHealthClient(addresses.inventory),
  };
  const all = [inventoryBackend];
  return {
    inventory: inventoryBackend,
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
  });
}
