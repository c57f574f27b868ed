/** The processes of the mesh mode, each its own entrypoint (paths from the repository root). */
export type MeshComponentName =
  "gateway" | "inventory" | "call-control" | "messaging" | "usage" | "webhook";

export interface MeshComponent {
  name: MeshComponentName;
  entry: string;
  /** grpc: ready when grpc.health.v1 answers SERVING; http: when the gateway's health answers 200. */
  probe: "grpc" | "http";
  /** The variable the process reads its listen port from. */
  portVariable: string;
  /** The variable its callers (the gateway, other services) find it by. */
  addressVariable?: string;
  defaultPort: number;
  defaultAdminPort: number;
}

/** Backend services in start order (the gateway starts after them, and stops before them). */
export const meshServices: readonly MeshComponent[] = [
  {
    name: "inventory",
    entry: "services/inventory/dist/main.js",
    probe: "grpc",
    portVariable: "INVENTORY_GRPC_PORT",
    addressVariable: "INVENTORY_ADDR",
    defaultPort: 50051,
    defaultAdminPort: 9091,
  },
  {
    name: "usage",
    entry: "services/usage/dist/main.js",
    probe: "grpc",
    portVariable: "USAGE_GRPC_PORT",
    addressVariable: "USAGE_ADDR",
    defaultPort: 50054,
    defaultAdminPort: 9094,
  },
  {
    name: "call-control",
    entry: "services/call-control/dist/main.js",
    probe: "grpc",
    portVariable: "CALL_CONTROL_GRPC_PORT",
    addressVariable: "CALL_CONTROL_ADDR",
    defaultPort: 50052,
    defaultAdminPort: 9092,
  },
  {
    name: "messaging",
    entry: "services/messaging/dist/main.js",
    probe: "grpc",
    portVariable: "MESSAGING_GRPC_PORT",
    addressVariable: "MESSAGING_ADDR",
    defaultPort: 50053,
    defaultAdminPort: 9093,
  },
  {
    name: "webhook",
    entry: "services/webhook/dist/main.js",
    probe: "grpc",
    portVariable: "WEBHOOK_GRPC_PORT",
    addressVariable: "WEBHOOK_ADDR",
    defaultPort: 50055,
    defaultAdminPort: 9095,
  },
];

export const meshGateway: MeshComponent = {
  name: "gateway",
  entry: "gateway/dist/main.js",
  probe: "http",
  portVariable: "PORT",
  defaultPort: 8080,
  defaultAdminPort: 9090,
};

export const meshComponents: readonly MeshComponent[] = [...meshServices, meshGateway];

/** The webhook service's internal sink (one port for every replica). */
export const defaultWebhookSinkPort = 50056;
