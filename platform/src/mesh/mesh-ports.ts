import { createServer, type Server } from "node:net";
import {
  defaultWebhookSinkPort,
  meshComponents,
  type MeshComponentName,
} from "./mesh-components.js";

/** Every fixed address of a mesh: processes find each other by these, so none may be 0. */
export interface MeshPorts {
  /** The gateway's HTTP port and each service's gRPC port. */
  listen: Record<MeshComponentName, number>;
  /** Each process's admin HTTP port (/metrics, /livez, /readyz). */
  admin: Record<MeshComponentName, number>;
  webhookSink: number;
}

const byName = (pick: (c: (typeof meshComponents)[number]) => number) =>
  Object.fromEntries(meshComponents.map((c) => [c.name, pick(c)])) as Record<
    MeshComponentName,
    number
  >;

/** The well-known ports: each component declaration's own (and the webhook sink's). */
export const defaultMeshPorts = (): MeshPorts => ({
  listen: byName((c) => c.defaultPort),
  admin: byName((c) => c.defaultAdminPort),
  webhookSink: defaultWebhookSinkPort,
});

/**
 * Ports free on loopback right now, for a mesh that must not collide with another (tests):
 * all are held open at once, so none repeats, then released for the processes to bind.
 */
export async function freeMeshPorts(): Promise<MeshPorts> {
  const count = meshComponents.length * 2 + 1;
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", resolve);
      });
      const address = server.address();
      if (!address || typeof address === "string") throw new Error("no port bound");
      ports.push(address.port);
    }
    const next = () => ports.shift()!;
    return { listen: byName(next), admin: byName(next), webhookSink: next() };
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}
