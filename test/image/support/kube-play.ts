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
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { ofKind, type K8sObject } from "../../chart/support/render.js";

const run = promisify(execFile);

/** podman with runc (as scripts/build-image.sh and test/image run it). */
export const podman = async (...args: string[]): Promise<string> =>
  (
    await run("podman", ["--runtime", "runc", ...args], { maxBuffer: 64 * 1024 * 1024 })
  ).stdout.trim();

/** A rendered Deployment as podman plays its pods, and what the kubelet would do with them. */
export interface PlayableDeployment {
  name: string;
  component: string;
  /** spec.replicas, or the HorizontalPodAutoscaler's minReplicas when the chart leaves it out. */
  replicas: number;
  /** The rendered readiness probe: GET `path` on `port`, or the kubelet's plaintext gRPC check. */
  readiness: { http: { path: string; port: number } } | { grpc: { port: number } };
  /** The readiness probe's period. */
  periodMs: number;
  /** Consecutive failed readiness probes that take a Ready pod out of its Service. */
  failureThreshold: number;
  /** The startup probe's budget: periodSeconds × failureThreshold. */
  startupBudgetMs: number;
  /** terminationGracePeriodSeconds. */
  graceSeconds: number;
  /** The container's name (podman names it `<pod>-<container>`). */
  container: string;
  /** The preStop exec command, if the chart renders one. */
  preStop?: string[];
  /** The Pod object of one replica named `podName`. */
  pod(podName: string): unknown;
}

/** One played pod of a Deployment. */
export type PlayedPod = PlayableDeployment & { name: string; deployment: string };

export const podOf = (deployment: PlayableDeployment, name: string): PlayedPod => ({
  ...deployment,
  name,
  deployment: deployment.name,
});

/**
 * The rendered chart as `podman kube play` (podman 4.3) can run it: its ConfigMaps, and each
 * Deployment as a Pod template whose replicas are played one by one. What podman 4.3 cannot do
 * is done here: `$(VAR)` in env values is expanded, `fieldRef`s become values (the pod's own
 * name for POD_NAME), probes and preStop are dropped (the test probes and runs preStop as the
 * kubelet would), containerPorts are dropped (podman would publish them on the host), Secret
 * volumes become host folders, and `hostAliases` name each Service after its stand-in's address.
 */
export function playableDeployments(
  objects: K8sObject[],
  secretFolders: Record<string, string>,
  serviceAddresses: Record<string, string>,
): { configMaps: unknown[]; deployments: PlayableDeployment[] } {
  const minReplicas = new Map(
    ofKind<IHorizontalPodAutoscaler>(objects, "HorizontalPodAutoscaler").map(
      ({ spec }) => [spec!.scaleTargetRef.name, spec!.minReplicas ?? 1] as const,
    ),
  );
  const hostAliases = Object.entries(serviceAddresses).map(([hostname, ip]) => ({
    ip,
    hostnames: [hostname, `${hostname}.default.svc`, `${hostname}.default.svc.cluster.local`],
  }));
  const deployments = ofKind<IDeployment>(objects, "Deployment").map(
    (deployment): PlayableDeployment => {
      const template = deployment.spec!.template;
      const rendered = template.spec!.containers[0]! as IContainer;
      const name = deployment.metadata.name;
      const probe = rendered.readinessProbe!;
      const portOf = (port: number | string) =>
        typeof port === "number"
          ? port
          : rendered.ports!.find((candidate) => candidate.name === port)!.containerPort;
      const readiness = probe.grpc
        ? { grpc: { port: probe.grpc.port } }
        : { http: { path: String(probe.httpGet!.path), port: portOf(probe.httpGet!.port) } };
      const startup = rendered.startupProbe ?? probe;
      return {
        name,
        component: template.metadata!.labels!["app.kubernetes.io/component"]!,
        replicas: deployment.spec!.replicas ?? minReplicas.get(name) ?? 1,
        readiness,
        periodMs: (probe.periodSeconds ?? 10) * 1000,
        failureThreshold: probe.failureThreshold ?? 3,
        startupBudgetMs: (startup?.periodSeconds ?? 10) * (startup?.failureThreshold ?? 3) * 1000,
        graceSeconds: template.spec!.terminationGracePeriodSeconds ?? 30,
        container: rendered.name,
        ...(rendered.lifecycle?.preStop?.exec?.command
          ? { preStop: rendered.lifecycle.preStop.exec.command }
          : {}),
        pod: (podName) => ({
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: podName, labels: template.metadata!.labels },
          spec: playableSpec(template.spec!, podName, secretFolders, hostAliases),
        }),
      };
    },
  );
  return {
    configMaps: objects.filter((object) => object.kind === "ConfigMap"),
    deployments,
  };
}

function playableSpec(
  rendered: IPodSpec,
  podName: string,
  secretFolders: Record<string, string>,
  hostAliases: IPodSpec["hostAliases"],
): IPodSpec {
  const spec = structuredClone(rendered);
  const container = spec.containers[0]! as IContainer;
  const values: Record<string, string> = {
    POD_NAME: podName,
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
  spec.hostAliases = hostAliases;
  spec.volumes = (spec.volumes ?? []).map((volume) =>
    volume.secret
      ? {
          name: volume.name,
          hostPath: { path: secretFolders[volume.secret.secretName!]!, type: "Directory" },
        }
      : volume,
  );
  return spec;
}

/** Plays `pods` (with the ConfigMaps they read) on `network`. */
export async function playPods(
  network: string,
  configMaps: unknown[],
  pods: unknown[],
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "sb-kube-"));
  const manifest = join(dir, "pods.yaml");
  writeFileSync(
    manifest,
    [...configMaps, ...pods].map((document) => stringify(document)).join("---\n"),
  );
  try {
    await podman("kube", "play", "--network", network, manifest);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
export const forward = (host: string, port: number, target: number) =>
  forwarder(host, port, () => ({ host: "127.0.0.1", port: target }));

/**
 * A TCP forwarder listening on `host:port`: each connection goes to the upstream `upstream()`
 * names at that moment, or is reset when it names none (as kube-proxy rejects a Service
 * without ready endpoints). Like kube-proxy's NAT, it passes each side's FIN on its own (a
 * half-closed connection stays half-closed, the other direction still flows) and a reset as a
 * reset, and keeps nothing open once both directions are done.
 */
export async function forwarder(
  host: string,
  port: number,
  upstream: () => { host: string; port: number } | undefined,
): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const target = upstream();
    if (!target) return client.resetAndDestroy();
    const upstreamSocket = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    const peers = new Map<Socket, Socket>([
      [client, upstreamSocket],
      [upstreamSocket, client],
    ]);
    for (const [socket, peer] of peers) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      // A reset (or a refused upstream) resets the other side too.
      socket.on("error", () => {
        if (!peer.destroyed) peer.resetAndDestroy();
      });
      // The FIN of one side ends the other's writing; a socket closes once it has both
      // received and sent a FIN (autoDestroy).
      socket.pipe(peer);
    }
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
