import { gatewayComponent } from "@switchboard/gateway";
import { addressVariable, grpcPortVariable } from "@switchboard/kit";
import { serviceComponents } from "../components.js";

/** The processes of the mesh mode, each its own entrypoint (paths from the repository root). */
export type MeshComponentName = (typeof serviceComponents)[number]["name"] | "gateway";

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
export const meshServices: readonly MeshComponent[] = serviceComponents.map((component) => ({
  name: component.name,
  entry: `services/${component.name}/dist/main.js`,
  probe: "grpc",
  portVariable: grpcPortVariable(component.name),
  addressVariable: addressVariable(component.name),
  defaultPort: component.grpcPort,
  defaultAdminPort: component.adminPort,
}));

export const meshGateway: MeshComponent = {
  name: gatewayComponent.name,
  entry: "gateway/dist/main.js",
  probe: "http",
  portVariable: "PORT",
  defaultPort: gatewayComponent.httpPort,
  defaultAdminPort: gatewayComponent.adminPort,
};

export const meshComponents: readonly MeshComponent[] = [...meshServices, meshGateway];

/** The webhook service's internal sink (one port for every replica). */
export const defaultWebhookSinkPort = Number(
  serviceComponents.find((c) => c.name === "webhook")?.ownProcessDefaults?.WEBHOOK_SINK_PORT,
);
