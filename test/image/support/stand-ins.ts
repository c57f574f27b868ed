import type { IDeployment } from "kubernetes-models/apps/v1";
import type { IService } from "kubernetes-models/v1";
import { ofKind, type K8sObject } from "../../chart/support/render.js";
import { forwarder, podman, probeReady, type PlayedPod } from "./kube-play.js";

/**
 * The cluster parts podman does not play, for the pods of test/image/kube-play: kube-proxy (a
 * Service's address forwarding each new connection to one of its Ready pods, round robin) and
 * the kubelet (readiness probes as rendered, and a pod's termination: out of its Service,
 * preStop, SIGTERM, SIGKILL at the end of the grace period).
 */

/** A rendered Service: its selector's component and its ports, targetPort as a number. */
export interface ServicePlan {
  name: string;
  component: string;
  ports: { port: number; targetPort: number }[];
}

export function servicePlans(objects: K8sObject[]): ServicePlan[] {
  const deployments = ofKind<IDeployment>(objects, "Deployment");
  return ofKind<IService>(objects, "Service").map((service) => {
    const component = service.spec!.selector!["app.kubernetes.io/component"]!;
    const container = deployments.find(
      (deployment) =>
        deployment.spec!.template.metadata!.labels!["app.kubernetes.io/component"] === component,
    )!.spec!.template.spec!.containers[0]!;
    return {
      name: service.metadata!.name!,
      component,
      ports: service.spec!.ports!.map(({ port, targetPort }) => ({
        port,
        targetPort:
          typeof targetPort === "string"
            ? container.ports!.find((candidate) => candidate.name === targetPort)!.containerPort
            : (targetPort ?? port),
      })),
    };
  });
}

/** kube-proxy for one Service: its address on the podman bridge, its Ready pods' addresses. */
export class ServiceStandIn {
  /** The addresses of the pods in the Service's endpoints (Ready, not terminating). */
  readonly endpoints = new Set<string>();
  private turn = 0;
  private closers: (() => Promise<void>)[] = [];

  private constructor(readonly plan: ServicePlan) {}

  static async start(plan: ServicePlan, address: string): Promise<ServiceStandIn> {
    const standIn = new ServiceStandIn(plan);
    for (const { port, targetPort } of plan.ports) {
      const server = await forwarder(address, port, () => {
        const host = standIn.pick();
        return host === undefined ? undefined : { host, port: targetPort };
      });
      standIn.closers.push(server.close);
    }
    return standIn;
  }

  private pick(): string | undefined {
    const ready = [...this.endpoints];
    if (ready.length === 0) return undefined;
    return ready[this.turn++ % ready.length];
  }

  async close(): Promise<void> {
    await Promise.all(this.closers.map((close) => close()));
  }
}

interface Watched {
  pod: PlayedPod;
  address: string;
  ready: boolean;
  stopped: boolean;
  becameReady: Promise<void>;
}

/**
 * The kubelet's readiness side: each watched pod is probed every period as rendered; Ready
 * after one success puts it in its Service's endpoints, `failureThreshold` failures in a row
 * take it out.
 */
export class KubeletStandIn {
  private readonly watched = new Map<string, Watched>();

  constructor(readonly services: ServiceStandIn[]) {}

  private serviceOf(pod: PlayedPod): ServiceStandIn | undefined {
    return this.services.find((service) => service.plan.component === pod.component);
  }

  watch(pod: PlayedPod, address: string): void {
    let resolveReady!: () => void;
    const entry: Watched = {
      pod,
      address,
      ready: false,
      stopped: false,
      becameReady: new Promise<void>((resolve) => (resolveReady = resolve)),
    };
    this.watched.set(pod.name, entry);
    void (async () => {
      let failures = 0;
      while (!entry.stopped) {
        const ok = await probeReady(pod, address);
        if (entry.stopped) break;
        failures = ok ? 0 : failures + 1;
        if (ok && !entry.ready) {
          entry.ready = true;
          this.serviceOf(pod)?.endpoints.add(address);
          resolveReady();
        } else if (entry.ready && failures >= pod.failureThreshold) {
          entry.ready = false;
          this.serviceOf(pod)?.endpoints.delete(address);
        }
        await new Promise((resolve) => setTimeout(resolve, pod.periodMs));
      }
    })();
  }

  /** Whether `pod` became Ready within `budgetMs`. */
  async waitReady(pod: string, budgetMs: number): Promise<boolean> {
    const entry = this.watched.get(pod)!;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), budgetMs);
    });
    try {
      return await Promise.race([entry.becameReady.then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops probing `pod` and takes it out of its Service (a deleted pod's first step). */
  forget(pod: string): void {
    const entry = this.watched.get(pod);
    if (!entry) return;
    entry.stopped = true;
    this.serviceOf(entry.pod)?.endpoints.delete(entry.address);
    this.watched.delete(pod);
  }

  stopAll(): void {
    for (const name of [...this.watched.keys()]) this.forget(name);
  }

  /**
   * Deletes `pod` as the kubelet does: out of its Service, its preStop as rendered, then
   * SIGTERM, and SIGKILL once the grace period (counted from the deletion) has run out.
   * Answers the container's exit code and how long it took to exit after SIGTERM.
   */
  async terminate(pod: PlayedPod): Promise<{ exitCode: number; exitMs: number }> {
    const started = Date.now();
    this.forget(pod.name);
    const container = `${pod.name}-${pod.container}`;
    if (pod.preStop) await podman("exec", container, ...pod.preStop);
    const left = Math.max(1, Math.ceil(pod.graceSeconds - (Date.now() - started) / 1000));
    const signalled = Date.now();
    await podman("stop", "--time", String(left), container);
    const exitMs = Date.now() - signalled;
    const exitCode = Number(await podman("inspect", container, "--format", "{{.State.ExitCode}}"));
    await podman("pod", "rm", "-f", pod.name);
    return { exitCode, exitMs };
  }
}
