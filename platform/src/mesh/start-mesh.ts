import { fileURLToPath } from "node:url";
import { ensureInternalSecret } from "@switchboard/kit";
import {
  childEnv,
  meshAddresses,
  preloadArgs,
  stopTimeoutMs,
  type MeshStores,
} from "./child-launch.js";
import {
  meshGateway,
  meshServices,
  type MeshComponent,
  type MeshComponentName,
} from "./mesh-components.js";
import { defaultMeshPorts, type MeshPorts } from "./mesh-ports.js";
import { grpcReadiness, httpReadiness } from "./readiness-probes.js";
import { superviseChild, type MeshChild } from "./supervised-child.js";

export interface MeshOptions extends MeshStores {
  /** Default: the well-known ports (defaultMeshPorts); tests pass freeMeshPorts(). */
  ports?: MeshPorts;
  /** The environment every process starts from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Variables for one component only (e.g. CALL_DRAIN_SECONDS for call-control). */
  componentEnv?: Partial<Record<MeshComponentName, Record<string, string>>>;
  /** The repository root, where the entries' dist/ live (default: found from this module). */
  root?: string;
  /** Each line a process writes (default: to stdout, prefixed with its name). */
  output?: (name: string, line: string) => void;
  /** The supervisor's own messages (default: to stderr). */
  notice?: (message: string) => void;
  restartBackoff?: { initialMs: number; maxMs: number };
  /** How long each component may take to become ready (default 60 s). */
  readyTimeoutMs?: number;
}

export interface RunningMesh {
  /** The gateway's loopback URL. */
  url: string;
  ports: MeshPorts;
  /** INVENTORY_ADDR, CALL_CONTROL_ADDR, … as the processes were given them. */
  addresses: Record<string, string>;
  children: Record<MeshComponentName, MeshChild>;
  /** The gateway first, then the services in reverse start order: each drains and exits. */
  stop(): Promise<void>;
}

const repositoryRoot = () => fileURLToPath(new URL("../../../", import.meta.url));

export const prefixedOutput = (name: string, line: string) =>
  void process.stdout.write(`${name.padEnd(12)} | ${line}\n`);

/**
 * The mesh mode on one machine: every component its own `node` process (built dist/ entries),
 * started side by side (each service migrates its own schema; the gateway reaches them over
 * gRPC when they serve), ready once each serves. A process that exits unasked is restarted
 * with backoff.
 */
export async function startMesh(options: MeshOptions): Promise<RunningMesh> {
  const root = options.root ?? repositoryRoot();
  const ports = options.ports ?? defaultMeshPorts();
  // Every child shares one internal secret: the operator's, or one made for this run.
  const base = { ...(options.env ?? process.env) };
  ensureInternalSecret(base);
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const url = `http://127.0.0.1:${ports.listen.gateway}`;
  const children = {} as Record<MeshComponentName, MeshChild>;
  const started: MeshChild[] = [];

  const start = (component: MeshComponent) => {
    const env = childEnv(component, {
      base,
      stores: options,
      ports,
      own: options.componentEnv?.[component.name],
    });
    const probe =
      component.probe === "grpc"
        ? grpcReadiness(`127.0.0.1:${ports.listen[component.name]}`)
        : httpReadiness(`${url}/api/health`);
    const child = superviseChild({
      name: component.name,
      args: [...preloadArgs, component.entry],
      cwd: root,
      env,
      probe,
      output: options.output ?? prefixedOutput,
      notice: options.notice ?? ((message) => void process.stderr.write(`mesh | ${message}\n`)),
      backoff: options.restartBackoff ?? { initialMs: 500, maxMs: 30_000 },
      stopTimeoutMs: stopTimeoutMs(component.name, env),
    });
    children[component.name] = child;
    started.push(child);
    return child;
  };

  // Should the supervisor itself go away, no child outlives it.
  const killAll = () => started.forEach((child) => child.forceKill());
  process.once("exit", killAll);
  const stop = async () => {
    for (const child of [...started].reverse()) await child.stop();
    process.off("exit", killAll);
  };

  try {
    // Side by side, as Kubernetes starts them: nothing waits on another to start.
    const all = [...meshServices, meshGateway].map(start);
    await Promise.all(all.map((child) => child.waitReady(readyTimeoutMs)));
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, ports, addresses: meshAddresses(ports), children, stop };
}
