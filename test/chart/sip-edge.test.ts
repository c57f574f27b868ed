import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { IDeployment } from "kubernetes-models/apps/v1";
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import type { IConfigMap, IService } from "kubernetes-models/v1";
import { renderChart } from "../../scripts/helm-render.mjs";
import { chartDir, componentOf, ofKind, renderObjects } from "./support/render.js";
import { validateObject } from "./support/validate-object.js";

const sipValues = join(chartDir, "ci", "sip-values.yaml");
const edgeFile = (name: string) => readFileSync(join(chartDir, "files", "sip-edge", name), "utf8");
const forEdge = <T>(objects: T[]) =>
  objects.filter((object) => componentOf(object as never) === "sip-edge");

describe("the SIP edge in the chart (sipEdge.enabled)", () => {
  const objects = renderObjects({
    valuesFiles: [sipValues],
    set: [
      "sipEdge.enabled=true",
      "sipEdge.tls.enabled=true",
      "sipEdge.publicAddress=sip.switchboard.example.com",
      "sipEdge.allowFrom={203.0.113.0/24}",
      "sipEdge.flood.requestsPerTwoSeconds=40",
    ],
  });
  const [deployment] = forEdge(ofKind<IDeployment>(objects, "Deployment"));
  const container = deployment!.spec!.template.spec!.containers[0]!;
  const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));

  it("renders valid objects: a ConfigMap, Deployment, Service, ServiceAccount, PDB and NetworkPolicy", () => {
    for (const object of objects) expect(() => validateObject(object)).not.toThrow();
    expect(
      forEdge(objects)
        .map((o) => o.kind)
        .sort(),
    ).toEqual([
      "ConfigMap",
      "Deployment",
      "NetworkPolicy",
      "PodDisruptionBudget",
      "Service",
      "ServiceAccount",
    ]);
    const names = objects.map((object) => `${object.kind}/${object.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
  });

  it("ships files/sip-edge/ unchanged in its ConfigMap, mounted where the command reads it", () => {
    const [configMap] = forEdge(ofKind<IConfigMap>(objects, "ConfigMap"));
    expect(configMap!.data).toEqual({
      "kamailio.cfg": edgeFile("kamailio.cfg"),
      "entrypoint.sh": edgeFile("entrypoint.sh"),
    });
    expect(container.command).toEqual(["/bin/sh", "/etc/switchboard-sip-edge/entrypoint.sh"]);
    expect(container.volumeMounts).toContainEqual({
      name: "config",
      mountPath: "/etc/switchboard-sip-edge",
      readOnly: true,
    });
    expect(deployment!.spec!.template.metadata!.annotations!["checksum/config"]).toMatch(
      /^[0-9a-f]{64}$/,
    );
  });

  it("gives kamailio every setting its configuration reads, and TLS from the Secret", () => {
    const read = [...edgeFile("kamailio.cfg").matchAll(/^#!defenvs? (\w+)/gm)].map((m) => m[1]!);
    expect(read.length).toBeGreaterThan(5);
    for (const name of read) expect(env, name).toHaveProperty(name);
    expect(env).toMatchObject({
      EDGE_PHONE_UDP: "udp:$(POD_IP):5060 advertise sip.switchboard.example.com:5060",
      EDGE_PHONE_TCP: "tcp:$(POD_IP):5060 advertise sip.switchboard.example.com:5060",
      EDGE_PHONE_TLS: "tls:$(POD_IP):5061 advertise sip.switchboard.example.com:5061",
      EDGE_TLS: "1",
      EDGE_CORE: "udp:$(POD_IP):5080",
      EDGE_CORE_SERVICE: "switchboard-call-control-sip-core",
      EDGE_CORE_PORT: "5060",
      EDGE_PIKE_DENSITY: "40",
      EDGE_AUTH_FAILURES: "10",
      EDGE_BAN_SECONDS: "300",
    });
    const names = (container.env ?? []).map((e) => e.name);
    // $(POD_IP) expands only from a variable defined before it.
    expect(names.indexOf("POD_IP")).toBe(0);
    const volumes = deployment!.spec!.template.spec!.volumes ?? [];
    expect(volumes).toContainEqual({
      name: "tls",
      secret: { secretName: "switchboard-sip-edge-tls" },
    });
    expect(env.EDGE_TLS_CERT).toBe("/etc/switchboard-sip-edge-tls/tls.crt");
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
    });
    expect(container.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
    expect(env.EDGE_DISPATCHER_LIST).toMatch(/^\/tmp\//);
  });

  it("exposes the phones' ports through a Service and lists call-control's ready pods in a headless one", () => {
    const services = ofKind<IService>(objects, "Service");
    const edge = services.find((s) => s.metadata.name === "switchboard-sip-edge")!;
    expect(edge.spec).toMatchObject({
      type: "LoadBalancer",
      externalTrafficPolicy: "Local",
      sessionAffinity: "ClientIP",
    });
    expect(edge.spec!.ports).toEqual([
      { name: "sip-udp", port: 5060, targetPort: "sip-udp", protocol: "UDP" },
      { name: "sip-tcp", port: 5060, targetPort: "sip-tcp", protocol: "TCP" },
      { name: "sips", port: 5061, targetPort: "sips", protocol: "TCP" },
    ]);
    const core = services.find((s) => s.metadata.name === "switchboard-call-control-sip-core")!;
    expect(core.spec).toMatchObject({
      clusterIP: "None",
      selector: { "app.kubernetes.io/component": "call-control" },
      ports: [{ name: "sip-udp", port: 5060, targetPort: "sip-udp", protocol: "UDP" }],
    });
    expect(core.spec!.publishNotReadyAddresses).toBeUndefined();
  });

  it("lets phones (sipEdge.allowFrom) reach the edge, the edge reach call-control's SIP port, and call-control the edge's", () => {
    const policies = ofKind<INetworkPolicy>(objects, "NetworkPolicy");
    const [edge] = forEdge(policies);
    const edgePods = {
      podSelector: {
        matchLabels: expect.objectContaining({ "app.kubernetes.io/component": "sip-edge" }),
      },
    };
    const callControlPods = {
      podSelector: {
        matchLabels: expect.objectContaining({ "app.kubernetes.io/component": "call-control" }),
      },
    };
    expect(edge!.spec!.ingress).toEqual([
      {
        ports: [
          { port: 5060, protocol: "UDP" },
          { port: 5060, protocol: "TCP" },
          { port: 5061, protocol: "TCP" },
        ],
        from: [{ ipBlock: { cidr: "203.0.113.0/24" } }],
      },
      { from: [callControlPods], ports: [{ port: 5080, protocol: "UDP" }] },
    ]);
    expect(edge!.spec!.egress).toContainEqual({
      to: [callControlPods],
      ports: [{ port: 5060, protocol: "UDP" }],
    });
    const callControl = policies.find((p) => componentOf(p as never) === "call-control")!;
    const sipRule = callControl.spec!.ingress!.find((rule) =>
      (rule.ports ?? []).some((port) => port.port === 5060),
    )!;
    expect(sipRule.from).toContainEqual(edgePods);
    expect(sipRule.from).toContainEqual({ ipBlock: { cidr: "198.51.100.0/24" } });
  });

  it("needs call-control's SIP listener, and renders none of it by default", () => {
    expect(() => renderChart({ set: ["sipEdge.enabled=true"] })).toThrow(
      /sipEdge.enabled needs sip.enabled/,
    );
    const defaults = renderObjects({ valuesFiles: [sipValues] });
    expect(forEdge(defaults)).toEqual([]);
    expect(defaults.map((o) => o.metadata.name)).not.toContain("switchboard-call-control-sip-core");
  });
});
