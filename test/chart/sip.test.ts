import { describe, expect, it } from "vitest";
import type { IDeployment } from "kubernetes-models/apps/v1";
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import type { IConfigMap, IService } from "kubernetes-models/v1";
import { join } from "node:path";
import { chartDir, componentOf, ofKind, renderObjects } from "./support/render.js";

const sipValues = [join(chartDir, "ci", "sip-values.yaml")];
const forCallControl = <T>(objects: T[]) =>
  objects.filter((object) => componentOf(object as never) === "call-control");

describe("voice over SIP in the chart (sip.enabled)", () => {
  const objects = renderObjects({ valuesFiles: sipValues });

  it("exposes call-control's SIP port through one Service, UDP and TCP, with ClientIP affinity", () => {
    const services = ofKind<IService>(objects, "Service").filter((s) =>
      s.metadata.name.endsWith("-sip"),
    );
    expect(services.map((s) => s.metadata.name)).toEqual(["switchboard-call-control-sip"]);
    const spec = services[0]!.spec!;
    expect(spec.type).toBe("LoadBalancer");
    expect(spec.sessionAffinity).toBe("ClientIP");
    expect(spec.externalTrafficPolicy).toBe("Local");
    expect(spec.loadBalancerSourceRanges).toEqual(["198.51.100.0/24"]);
    expect(spec.ports).toEqual([
      { name: "sip-udp", port: 5060, targetPort: "sip-udp", protocol: "UDP" },
      { name: "sip-tcp", port: 5060, targetPort: "sip-tcp", protocol: "TCP" },
    ]);
    expect(spec.selector).toMatchObject({ "app.kubernetes.io/component": "call-control" });
  });

  it("has each call-control replica listen on every address and say its own pod IP in Via and Contact", () => {
    const [configMap] = forCallControl(ofKind<IConfigMap>(objects, "ConfigMap"));
    expect(configMap!.data).toMatchObject({ SIP_LISTEN: "0.0.0.0:5060", VOICE_CARRIER: "sip" });
    expect(configMap!.data).not.toHaveProperty("SIP_PUBLIC_ADDRESS");
    const [deployment] = forCallControl(ofKind<IDeployment>(objects, "Deployment"));
    const container = deployment!.spec!.template.spec!.containers[0]!;
    expect(container.ports).toEqual(
      expect.arrayContaining([
        { name: "sip-udp", containerPort: 5060, protocol: "UDP" },
        { name: "sip-tcp", containerPort: 5060, protocol: "TCP" },
      ]),
    );
    const env = container.env ?? [];
    const podIp = env.findIndex((e) => e.name === "POD_IP");
    const published = env.findIndex((e) => e.name === "SIP_PUBLIC_ADDRESS");
    expect(env[podIp]?.valueFrom?.fieldRef?.fieldPath).toBe("status.podIP");
    // $(POD_IP) expands only from a variable defined before it.
    expect(published).toBeGreaterThan(podIp);
    expect(env[published]?.value).toBe("$(POD_IP):5060");
    expect(env.find((e) => e.name === "SIP_TRUNK_PASSWORD")?.valueFrom?.secretKeyRef).toMatchObject(
      {
        name: "carrier-trunk",
        key: "password",
      },
    );
  });

  it("names a fixed public address instead, when sip.publicAddress is set (an edge proxy)", () => {
    const withProxy = renderObjects({
      valuesFiles: sipValues,
      set: ["sip.publicAddress=sip-edge.example.com:5060"],
    });
    const [configMap] = forCallControl(ofKind<IConfigMap>(withProxy, "ConfigMap"));
    expect(configMap!.data).toMatchObject({ SIP_PUBLIC_ADDRESS: "sip-edge.example.com:5060" });
    const [deployment] = forCallControl(ofKind<IDeployment>(withProxy, "Deployment"));
    const names = deployment!.spec!.template.spec!.containers[0]!.env!.map((e) => e.name);
    expect(names).not.toContain("SIP_PUBLIC_ADDRESS");
  });

  it("listens on [::], says the pod's IPv6 address in brackets and asks for a dual-stack Service with sip.ipv6", () => {
    const ipv6 = renderObjects({ valuesFiles: sipValues, set: ["sip.ipv6=true"] });
    const [configMap] = forCallControl(ofKind<IConfigMap>(ipv6, "ConfigMap"));
    expect(configMap!.data).toMatchObject({ SIP_LISTEN: "[::]:5060" });
    const [deployment] = forCallControl(ofKind<IDeployment>(ipv6, "Deployment"));
    const env = deployment!.spec!.template.spec!.containers[0]!.env ?? [];
    expect(env.find((e) => e.name === "SIP_PUBLIC_ADDRESS")?.value).toBe("[$(POD_IP)]:5060");
    const [service] = ofKind<IService>(ipv6, "Service").filter((s) =>
      s.metadata.name.endsWith("-sip"),
    );
    expect(service!.spec!.ipFamilyPolicy).toBe("PreferDualStack");
    const [ipv4Service] = ofKind<IService>(objects, "Service").filter((s) =>
      s.metadata.name.endsWith("-sip"),
    );
    expect(ipv4Service!.spec!.ipFamilyPolicy).toBeUndefined();
    const fixed = renderObjects({
      valuesFiles: sipValues,
      set: ["sip.ipv6=true", "sip.publicAddress=[2001:db8::5]:5060"],
    });
    const [fixedConfig] = forCallControl(ofKind<IConfigMap>(fixed, "ConfigMap"));
    expect(fixedConfig!.data).toMatchObject({ SIP_PUBLIC_ADDRESS: "[2001:db8::5]:5060" });
  });

  it("opens SIP in call-control's NetworkPolicy only, from sip.allowFrom, and UDP out to the phones and the trunk", () => {
    const policies = ofKind<INetworkPolicy>(objects, "NetworkPolicy");
    const sipRules = (policy: INetworkPolicy) =>
      (policy.spec!.ingress ?? []).filter((rule) =>
        (rule.ports ?? []).some((port) => port.port === 5060),
      );
    for (const policy of policies) {
      if (componentOf(policy as never) === "call-control") continue;
      expect(sipRules(policy), policy.metadata!.name).toEqual([]);
    }
    const [policy] = forCallControl(policies);
    const [rule] = sipRules(policy!);
    expect(rule!.ports).toEqual([
      { port: 5060, protocol: "UDP" },
      { port: 5060, protocol: "TCP" },
    ]);
    expect(rule!.from).toEqual([
      { ipBlock: { cidr: "198.51.100.0/24" } },
      { ipBlock: { cidr: "10.0.0.0/8" } },
    ]);
    expect(policy!.spec!.egress).toContainEqual({
      ports: [
        { protocol: "UDP" },
        { port: 5060, protocol: "TCP" },
        { port: 5061, protocol: "TCP" },
      ],
    });
  });

  it("mounts the SIP TLS certificate's Secret into call-control and opens its port (sip.tls)", () => {
    const withTls = renderObjects({
      valuesFiles: sipValues,
      set: [
        "sip.tls.enabled=true",
        "sip.tls.existingSecret=phones-tls",
        "sip.tls.trunkCaKey=trunk-ca.crt",
      ],
    });
    const [configMap] = forCallControl(ofKind<IConfigMap>(withTls, "ConfigMap"));
    expect(configMap!.data).toMatchObject({
      SIP_TLS_PORT: "5061",
      SIP_TLS_CERT_FILE: "/etc/switchboard/sip-tls/tls.crt",
      SIP_TLS_KEY_FILE: "/etc/switchboard/sip-tls/tls.key",
      SIP_TLS_CA_FILE: "/etc/switchboard/sip-tls/trunk-ca.crt",
    });
    const [deployment] = forCallControl(ofKind<IDeployment>(withTls, "Deployment"));
    const pod = deployment!.spec!.template.spec!;
    expect(pod.volumes).toContainEqual({ name: "sip-tls", secret: { secretName: "phones-tls" } });
    expect(pod.containers[0]!.volumeMounts).toContainEqual({
      name: "sip-tls",
      mountPath: "/etc/switchboard/sip-tls",
      readOnly: true,
    });
    expect(pod.containers[0]!.ports).toContainEqual({
      name: "sip-tls",
      containerPort: 5061,
      protocol: "TCP",
    });
    const service = ofKind<IService>(withTls, "Service").find((s) =>
      s.metadata.name.endsWith("-sip"),
    );
    expect(service!.spec!.ports).toContainEqual({
      name: "sip-tls",
      port: 5061,
      targetPort: "sip-tls",
      protocol: "TCP",
    });
    const [policy] = forCallControl(ofKind<INetworkPolicy>(withTls, "NetworkPolicy"));
    const ingress = (policy!.spec!.ingress ?? []).find((rule) =>
      (rule.ports ?? []).some((port) => port.port === 5061),
    );
    expect(ingress!.ports).toContainEqual({ port: 5061, protocol: "TCP" });
    // Other components mount nothing of it.
    for (const other of ofKind<IDeployment>(withTls, "Deployment")) {
      if (componentOf(other as never) === "call-control") continue;
      expect(JSON.stringify(other.spec!.template.spec!.volumes ?? [])).not.toContain("sip-tls");
    }
  });

  it("renders none of it by default", () => {
    const defaults = renderObjects();
    expect(ofKind<IService>(defaults, "Service").map((s) => s.metadata.name)).not.toContain(
      "switchboard-call-control-sip",
    );
    const [configMap] = forCallControl(ofKind<IConfigMap>(defaults, "ConfigMap"));
    expect(configMap!.data).not.toHaveProperty("SIP_LISTEN");
  });
});
