import type { Client } from "@grpc/grpc-js";
import { callcontrol, inventory, messaging, usage, webhook } from "@switchboard/proto";
import { callUnary, createClient, createHealthClient } from "@switchboard/kit";
import type { Principal } from "./auth/index.js";

/**
 * The services the gateway calls: the key it knows each by, its component name (the declaration
 * in the service's package, listed in platform/src/components.ts; test/chart/components.test.ts
 * checks the two agree) and its generated gRPC client. The one table: the addresses
 * (`<NAME>_ADDR`), the clients, readiness and the per-request calls (backend-rpc.ts) derive
 * from it.
 */
const backendTable = {
  inventory: { name: "inventory", Client: inventory.InventoryServiceClient },
  usage: { name: "usage", Client: usage.UsageServiceClient },
  messaging: { name: "messaging", Client: messaging.MessagingServiceClient },
  callControl: { name: "call-control", Client: callcontrol.CallControlServiceClient },
  webhook: { name: "webhook", Client: webhook.WebhookServiceClient },
} as const;

type BackendTable = typeof backendTable;

/** The key the gateway knows a backend by (`callControl`). */
export type BackendKey = keyof BackendTable;

export const backendKeys = Object.keys(backendTable) as BackendKey[];

/** Each backend's component name, by key. */
export const backendNames = Object.fromEntries(
  backendKeys.map((key) => [key, backendTable[key].name]),
) as { [Key in BackendKey]: BackendTable[Key]["name"] };

export type BackendAddresses = Record<BackendKey, string>;

/** A backend service's gRPC client plus its health client (for readiness). */
export interface Backend<C extends Client> {
  name: string;
  client: C;
  health: Client;
}

/** Any generated gRPC client class. */
type ClientConstructor = Parameters<typeof createClient<Client>>[0];

/** The gRPC client class of the backend `Key`. */
type ClientOf<Key extends BackendKey> = InstanceType<BackendTable[Key]["Client"]>;

type Clients = { [Key in BackendKey]: Backend<ClientOf<Key>> };

export interface Backends extends Clients {
  all(): Backend<Client>[];
  close(): void;
}

/**
 * `make(key)` for every backend, as an object by key. (TypeScript cannot relate a key to its own
 * client across the union of keys: `T` states what each entry is.)
 */
export function perBackend<T extends { [Key in BackendKey]: unknown }>(
  make: (key: BackendKey) => unknown,
): T {
  return Object.fromEntries(backendKeys.map((key) => [key, make(key)])) as T;
}

export function connectBackends(addresses: BackendAddresses): Backends {
  const clients = perBackend<Clients>((key) => ({
    name: backendTable[key].name,
    client: createClient(backendTable[key].Client as ClientConstructor, addresses[key]),
    health: createHealthClient(addresses[key]),
  }));
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
