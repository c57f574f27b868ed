import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createServer, connect, type Server, type Socket } from "node:net";
import { promisify } from "node:util";
import type { IDeployment } from "kubernetes-models/apps/v1";
import type { IContainer, IPodSpec } from "kubernetes-models/v1";
import { stringify } from "yaml";
import { checkHealth, createHealthClient } from "@switchboard/kit";
import type { K8sObject } from "../../chart/support/render.js";

const run = promisify(execFile);

/** podman with runc (as scripts/build-image.sh and test/image run it). */
export const podman = async (...args: string[]): Promise<string> =>
  (
    await run("podman", ["--runtime", "runc", ...args], { maxBuffer: 64 * 1024 * 1024 })
  ).stdout.trim();

/** A rendered Deployment as the pod that stands for it, and what the kubelet would probe. */
export interface PlayedPod {
  name: string;
  component: string;
  /** The rendered readiness probe: GET `path` on `port`, or the kubelet's plaintext gRPC check. */
  readiness: { http: { path: string; port: number } } | { grpc: { port: number } };
  /** The readiness probe's period. */
  periodMs: number;
  /** The startup probe's budget: periodSeconds × failureThreshold. */
  startupBudgetMs: number;
}

/**
 * The rendered chart as `podman kube play` (podman 4.3) can run it: its ConfigMaps, and one Pod
 * per Deployment named after the component's Service (so podman's DNS answers the Service name
 * with that pod: one replica, no forwarding stand-in). What podman 4.3 cannot do is done here:
 * `$(VAR)` in env values is expanded, `fieldRef`s other than metadata.name become values,
 * probes and preStop are dropped (the test probes as the kubelet would), containerPorts are
 * dropped (podman would publish them on the host), and Secret volumes become host folders.
 */
export function playablePods(
  objects: K8sObject[],
  secretFolders: Record<string, string>,
): { manifest: string; pods: PlayedPod[] } {
  const documents: unknown[] = objects.filter((object) => object.kind === "ConfigMap");
  const pods: PlayedPod[] = [];
  for (const deployment of objects.filter((object) => object.kind === "Deployment") as (
    IDeployment | K8sObject
  )[] as (IDeployment & K8sObject)[]) {
    const template = deployment.spec!.template;
    const spec = structuredClone(template.spec!) as IPodSpec;
    const container = spec.containers[0]! as IContainer;
    const name = deployment.metadata.name;
    const values: Record<string, string> = {
      POD_NAME: name,
      POD_NAMESPACE: "default",
      NODE_NAME: "podman",
    };
    container.env = (container.env ?? []).map((variable) => {
      if (variable.value !== undefined) {
        return {
          ...variable,
          value: variable.value.replace(/\$\((\w+)\)/g, (_, key: string) => values[key] ?? ""),
        };
      }
      if (variable.valueFrom?.fieldRef)
        return { name: variable.name, value: values[variable.name] ?? "" };
      return variable;
    });
    const probe = container.readinessProbe!;
    const portOf = (port: number | string) =>
      typeof port === "number"
        ? port
        : container.ports!.find((candidate) => candidate.name === port)!.containerPort;
    const readiness = probe.grpc
      ? { grpc: { port: probe.grpc.port } }
      : { http: { path: String(probe.httpGet!.path), port: portOf(probe.httpGet!.port) } };
    const startup = container.startupProbe ?? probe;
    for (const field of [
      "readinessProbe",
      "livenessProbe",
      "startupProbe",
      "lifecycle",
      "ports",
    ] as const) {
      delete container[field];
    }
    container.imagePullPolicy = "Never";
    for (const field of [
      "topologySpreadConstraints",
      "serviceAccountName",
      "imagePullSecrets",
      "nodeSelector",
      "tolerations",
      "priorityClassName",
      "affinity",
    ] as const) {
      delete spec[field];
    }
    spec.volumes = (spec.volumes ?? []).map((volume) =>
      volume.secret
        ? {
            name: volume.name,
            hostPath: { path: secretFolders[volume.secret.secretName!]!, type: "Directory" },
          }
        : volume,
    );
    documents.push({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels: template.metadata!.labels },
      spec,
    });
    pods.push({
      name,
      component: template.metadata!.labels!["app.kubernetes.io/component"]!,
      readiness,
      periodMs: (probe.periodSeconds ?? 10) * 1000,
      startupBudgetMs: (startup?.periodSeconds ?? 10) * (startup?.failureThreshold ?? 3) * 1000,
    });
  }
  return { manifest: documents.map((document) => stringify(document)).join("---\n"), pods };
}

/** A podman secret as kube play (4.3) reads it for secretKeyRef: JSON of base64 values. */
export async function createPodmanSecret(
  name: string,
  values: Record<string, string>,
): Promise<void> {
  const data = Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, Buffer.from(value).toString("base64")]),
  );
  await podman("secret", "rm", name).catch(() => undefined);
  // From a file: podman takes `-` only from a pipe, and Node's stdin is a socket.
  const file = join(mkdtempSync(join(tmpdir(), "sb-secret-")), "data.json");
  writeFileSync(file, JSON.stringify(data), { mode: 0o600 });
  try {
    await podman("secret", "create", name, file);
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

/** The IP of a played pod on its network. */
export const podAddress = async (pod: string): Promise<string> => {
  const infra = await podman("pod", "inspect", pod, "--format", "{{.InfraContainerID}}");
  return podman(
    "inspect",
    infra,
    "--format",
    "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
  );
};

/**
 * Forwards `host:port` (the podman network's gateway, which exists once a container is on the
 * network) to a loopback server of this machine (PostgreSQL, Redis).
 */
export async function forward(
  host: string,
  port: number,
  target: number,
): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One readiness probe of `pod` as the kubelet runs it (its gRPC probe speaks plaintext). */
export async function probeReady(pod: PlayedPod, address: string): Promise<boolean> {
  if ("grpc" in pod.readiness) {
    const client = createHealthClient(`${address}:${pod.readiness.grpc.port}`);
    try {
      return (await checkHealth(client, "", 2_000)) === "SERVING";
    } finally {
      client.close();
    }
  }
  const { path, port } = pod.readiness.http;
  const response = await fetch(`http://${address}:${port}${path}`, {
    // A connection of its own, as the kubelet's: pod addresses are reused by the next network.
    headers: { connection: "close" },
    signal: AbortSignal.timeout(2_000),
  }).catch(() => undefined);
  return response?.status === 200;
}

/** Probes `pod` every period, as the kubelet does, until it is ready or `budgetMs` has passed. */
export async function waitReady(
  pod: PlayedPod,
  address: string,
  budgetMs: number,
): Promise<boolean> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    if (await probeReady(pod, address)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pod.periodMs));
  }
}
