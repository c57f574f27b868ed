import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { IDeployment } from "kubernetes-models/apps/v1";
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { isAllowed, type Endpoint } from "./support/network-policy-eval.js";
import { chartDir, componentOf, ofKind, renderObjects } from "./support/render.js";

const namespace = "switchboard";
const services = ["inventory", "call-control", "messaging", "usage", "webhook"];

/** Who may open a connection to whom inside the release, on the callee's main port. */
const expectedEdges = new Set([
  ...services.map((service) => `gateway->${service}`),
  "call-control->inventory",
  "messaging->inventory",
]);

function setup(valuesFiles: string[] = []) {
  const objects = renderObjects({ valuesFiles });
  const policies = ofKind<INetworkPolicy & { metadata: { name: string } }>(
    objects,
    "NetworkPolicy",
  );
  const pods = new Map<string, Endpoint & { mainPort?: number }>();
  ofKind<IDeployment>(objects, "Deployment").forEach((deployment, index) => {
    const template = deployment.spec!.template;
    const container = template.spec!.containers[0]!;
    const ports = Object.fromEntries(
      (container.ports ?? []).map((port) => [port.name!, port.containerPort]),
    );
    const main = container.ports?.find((port) => port.name !== "admin");
    pods.set(componentOf(deployment)!, {
      name: componentOf(deployment)!,
      ip: `10.244.1.${index + 10}`,
      pod: { namespace, labels: template.metadata!.labels!, ports },
      ...(main ? { mainPort: main.containerPort } : {}),
    });
  });
  const allowed = (from: Endpoint, to: Endpoint, port: number, protocol?: "TCP" | "UDP") =>
    isAllowed(policies, namespace, { from, to, port, ...(protocol ? { protocol } : {}) });
  return { policies, pods, allowed };
}

const outsider = (name: string, namespaceName: string, labels: Record<string, string> = {}) => ({
  name,
  ip: "10.244.9.9",
  pod: { namespace: namespaceName, labels },
});
const ingressController = outsider("ingress-nginx", "ingress-nginx", { app: "ingress-nginx" });
const prometheus = outsider("prometheus", "monitoring", { app: "prometheus" });
const strangers = [
  outsider("a pod in another namespace", "default", { app: "curl" }),
  outsider("an unlabelled pod in the release's namespace", namespace, { app: "debug" }),
  outsider("a pod claiming another release", namespace, {
    "app.kubernetes.io/name": "switchboard",
    "app.kubernetes.io/instance": "other",
    "app.kubernetes.io/component": "gateway",
  }),
];
const kubeDns = outsider("kube-dns", "kube-system", { "k8s-app": "kube-dns" });
const address = (ip: string): Endpoint => ({ name: ip, ip });

describe("NetworkPolicies: who may talk to whom", () => {
  const { policies, pods, allowed } = setup();
  const components = [...pods.keys()];

  it("deny everything by default for every pod of the release", () => {
    const deny = policies.find((policy) => policy.metadata.name === "switchboard-default-deny")!;
    expect(deny.spec!.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(deny.spec!.ingress).toBeUndefined();
    expect(deny.spec!.egress).toBeUndefined();
    for (const pod of pods.values()) {
      for (const [key, value] of Object.entries(deny.spec!.podSelector.matchLabels!)) {
        expect(pod.pod!.labels[key]).toBe(value);
      }
    }
    // Only the default deny left: nothing passes, not even the gateway's own calls.
    const onlyDeny = [deny];
    const gateway = pods.get("gateway")!;
    const inventory = pods.get("inventory")!;
    expect(isAllowed(onlyDeny, namespace, { from: gateway, to: inventory, port: 50051 })).toBe(
      false,
    );
  });

  it("allow exactly the gateway → service and call-control/messaging → inventory edges", () => {
    expect(components.sort()).toEqual([...services, "gateway"].sort());
    for (const from of components) {
      for (const to of components) {
        const target = pods.get(to)!;
        const edge = `${from}->${to}`;
        expect(allowed(pods.get(from)!, target, target.mainPort!), edge).toBe(
          expectedEdges.has(edge),
        );
        // The admin port is for the metrics scraper only.
        expect(allowed(pods.get(from)!, target, 9090), `${edge} admin`).toBe(false);
      }
    }
    // The edge is on the callee's gRPC port only.
    expect(allowed(pods.get("gateway")!, pods.get("inventory")!, 50052)).toBe(false);
  });

  it("let no one else reach a service, and only the ingress controller reach the gateway", () => {
    for (const service of services) {
      const target = pods.get(service)!;
      for (const from of [ingressController, prometheus, ...strangers, address("203.0.113.7")]) {
        expect(allowed(from, target, target.mainPort!), `${from.name} -> ${service}`).toBe(false);
      }
    }
    const gateway = pods.get("gateway")!;
    expect(allowed(ingressController, gateway, 8080)).toBe(true);
    expect(allowed(ingressController, gateway, 9090)).toBe(false);
    for (const from of [prometheus, ...strangers, address("203.0.113.7")]) {
      expect(allowed(from, gateway, 8080), from.name).toBe(false);
    }
  });

  it("let the monitoring namespace scrape every admin port, and no one else", () => {
    for (const pod of pods.values()) {
      expect(allowed(prometheus, pod, 9090), pod.name).toBe(true);
      for (const stranger of strangers) expect(allowed(stranger, pod, 9090)).toBe(false);
    }
  });

  it("let every pod resolve names through kube-dns or NodeLocal DNSCache only", () => {
    const nodeLocalDns = address("169.254.20.10");
    for (const pod of pods.values()) {
      expect(allowed(pod, kubeDns, 53, "UDP"), pod.name).toBe(true);
      expect(allowed(pod, kubeDns, 53, "TCP"), pod.name).toBe(true);
      expect(allowed(pod, nodeLocalDns, 53, "UDP"), pod.name).toBe(true);
      expect(allowed(pod, nodeLocalDns, 53, "TCP"), pod.name).toBe(true);
      expect(allowed(pod, strangers[0]!, 53, "UDP"), pod.name).toBe(false);
      // Only DNS, only that address: not the cloud metadata service beside it.
      expect(allowed(pod, nodeLocalDns, 80), pod.name).toBe(false);
      expect(allowed(pod, address("169.254.169.254"), 53, "UDP"), pod.name).toBe(false);
    }
  });

  it("let the webhook reach the internet on 443 but no private, loopback or metadata address", () => {
    const webhook = pods.get("webhook")!;
    for (const ip of ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"]) {
      expect(allowed(webhook, address(ip), 443), ip).toBe(true);
      expect(allowed(webhook, address(ip), 80), `${ip}:80`).toBe(false);
    }
    const forbidden = [
      "10.0.0.5",
      "10.244.1.10", // a pod
      "172.16.0.1",
      "192.168.1.10",
      "127.0.0.1",
      "169.254.169.254", // AWS, GCP, Azure metadata
      "100.100.100.200", // Alibaba metadata (CGNAT range)
      "168.63.129.16", // Azure wire server
      "0.0.0.0",
      "::1",
      "fd00:ec2::254", // AWS metadata over IPv6
      "fe80::1",
      "::ffff:10.0.0.1",
    ];
    for (const ip of forbidden) expect(allowed(webhook, address(ip), 443), ip).toBe(false);
    // The other components do not reach the internet at all.
    for (const name of components.filter((component) => component !== "webhook")) {
      expect(allowed(pods.get(name)!, address("93.184.216.34"), 443), name).toBe(false);
    }
  });

  it("let every component reach PostgreSQL and Redis on their ports (any address by default)", () => {
    for (const pod of pods.values()) {
      expect(allowed(pod, address("10.20.0.5"), 5432), pod.name).toBe(true);
      expect(allowed(pod, address("10.30.0.5"), 6379), pod.name).toBe(true);
      expect(allowed(pod, address("10.20.0.5"), 5433), pod.name).toBe(false);
    }
  });

  it("narrow the database, Redis and collector edges when the values name them", () => {
    const production = setup([join(chartDir, "ci", "production-values.yaml")]);
    const collector = outsider("otel-collector", "observability", { app: "otel-collector" });
    for (const pod of production.pods.values()) {
      expect(production.allowed(pod, address("10.20.3.4"), 5432), pod.name).toBe(true);
      expect(production.allowed(pod, address("10.99.3.4"), 5432), pod.name).toBe(false);
      expect(production.allowed(pod, address("10.30.3.4"), 6379), pod.name).toBe(true);
      expect(production.allowed(pod, address("10.20.3.4"), 6379), pod.name).toBe(false);
      expect(production.allowed(pod, collector, 4318), pod.name).toBe(true);
      expect(production.allowed(pod, strangers[0]!, 4318), pod.name).toBe(false);
    }
    // The separate delivery workers reach the internet like the webhook service; only the
    // webhook service reaches the private receiver its values add.
    const worker = production.pods.get("webhook-worker")!;
    expect(production.allowed(worker, address("93.184.216.34"), 443)).toBe(true);
    expect(production.allowed(worker, address("10.40.0.10"), 8443)).toBe(false);
    expect(production.allowed(production.pods.get("webhook")!, address("10.40.0.10"), 8443)).toBe(
      true,
    );
    // No component may call the workers (they have no main port).
    for (const pod of production.pods.values()) {
      expect(production.allowed(pod, worker, 9090), pod.name).toBe(false);
    }
  });
});
