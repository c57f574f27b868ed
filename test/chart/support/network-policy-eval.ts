import { BlockList, isIPv4, isIPv6 } from "node:net";
import type {
  INetworkPolicy,
  INetworkPolicyPeer,
  INetworkPolicyPort,
} from "kubernetes-models/networking.k8s.io/v1";

/**
 * A small evaluator of NetworkPolicy semantics (networking.k8s.io/v1) for the chart's tests:
 * traffic passes when the sender's egress and the receiver's ingress both allow it. A pod not
 * selected by any policy of a direction is open in that direction; addresses outside the
 * cluster (`pod` unset) are not governed by policies.
 */
export interface Endpoint {
  name: string;
  ip: string;
  /** Set for pods: their namespace, labels and named container ports. */
  pod?: {
    namespace: string;
    namespaceLabels?: Record<string, string>;
    labels: Record<string, string>;
    ports?: Record<string, number>;
  };
}

export interface Traffic {
  from: Endpoint;
  to: Endpoint;
  port: number;
  protocol?: "TCP" | "UDP";
}

type Policy = INetworkPolicy & { metadata: { name: string } };
type LabelSelector = NonNullable<INetworkPolicyPeer["podSelector"]>;

function matchesSelector(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = key in labels;
    const value = labels[key];
    const ok =
      operator === "In"
        ? has && values.includes(value!)
        : operator === "NotIn"
          ? !has || !values.includes(value!)
          : operator === "Exists"
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}

function inCidr(ip: string, cidr: string): boolean {
  const [network, prefix] = cidr.split("/") as [string, string];
  const family = isIPv4(network) ? "ipv4" : "ipv6";
  if ((family === "ipv4" && !isIPv4(ip)) || (family === "ipv6" && !isIPv6(ip))) return false;
  const list = new BlockList();
  list.addSubnet(network, Number(prefix), family);
  return list.check(ip, family);
}

function namespaceLabels(pod: NonNullable<Endpoint["pod"]>): Record<string, string> {
  return { "kubernetes.io/metadata.name": pod.namespace, ...pod.namespaceLabels };
}

function peerMatches(peer: INetworkPolicyPeer, policyNamespace: string, other: Endpoint): boolean {
  if (peer.ipBlock) {
    const { cidr, except = [] } = peer.ipBlock;
    return inCidr(other.ip, cidr) && !except.some((excluded) => inCidr(other.ip, excluded));
  }
  const pod = other.pod;
  if (!pod) return false;
  const namespaceOk = peer.namespaceSelector
    ? matchesSelector(peer.namespaceSelector, namespaceLabels(pod))
    : pod.namespace === policyNamespace;
  const podOk = peer.podSelector ? matchesSelector(peer.podSelector, pod.labels) : true;
  return namespaceOk && podOk;
}

function portMatches(ports: INetworkPolicyPort[] | undefined, traffic: Traffic): boolean {
  if (!ports || ports.length === 0) return true;
  const protocol = traffic.protocol ?? "TCP";
  return ports.some((entry) => {
    if ((entry.protocol ?? "TCP") !== protocol) return false;
    if (entry.port === undefined) return true;
    const port =
      typeof entry.port === "string" ? traffic.to.pod?.ports?.[entry.port] : Number(entry.port);
    if (port === undefined) return false;
    return entry.endPort !== undefined
      ? traffic.port >= port && traffic.port <= entry.endPort
      : traffic.port === port;
  });
}

/** Whether one direction lets the traffic through: open when no policy selects the pod. */
function directionAllows(
  policies: Policy[],
  namespace: string,
  traffic: Traffic,
  type: "Ingress" | "Egress",
): boolean {
  const [self, other] = type === "Egress" ? [traffic.from, traffic.to] : [traffic.to, traffic.from];
  const pod = self.pod;
  if (!pod || pod.namespace !== namespace) return true;
  const selecting = policies.filter((policy) => {
    const spec = policy.spec!;
    const types = spec.policyTypes ?? (spec.egress ? ["Ingress", "Egress"] : ["Ingress"]);
    return types.includes(type) && matchesSelector(spec.podSelector, pod.labels);
  });
  if (selecting.length === 0) return true;
  return selecting.some((policy) => {
    const rules =
      type === "Egress"
        ? (policy.spec!.egress ?? []).map((rule) => ({ ports: rule.ports, peers: rule.to }))
        : (policy.spec!.ingress ?? []).map((rule) => ({ ports: rule.ports, peers: rule.from }));
    return rules.some(
      ({ ports, peers }) =>
        portMatches(ports, traffic) &&
        (!peers?.length || peers.some((peer) => peerMatches(peer, namespace, other))),
    );
  });
}

/** Policies rendered without a namespace all live in `namespace` (the release's). */
export function isAllowed(policies: Policy[], namespace: string, traffic: Traffic): boolean {
  return (
    directionAllows(policies, namespace, traffic, "Egress") &&
    directionAllows(policies, namespace, traffic, "Ingress")
  );
}
