import { describe, expect, it } from "vitest";
import type { IConfigMap } from "kubernetes-models/v1";
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { componentOf, ofKind, renderObjects, valuesMatrix } from "./support/render.js";

/** The ports of a policy's egress rule to the internet (0.0.0.0/0), if it has one. */
const internetPorts = (policy: INetworkPolicy): number[] | undefined =>
  policy
    .spec!.egress?.find((rule) => rule.to?.some((peer) => peer.ipBlock?.cidr === "0.0.0.0/0"))
    ?.ports?.map((port) => Number(port.port));

const cases = [
  ...valuesMatrix.map(({ name, files }) => ({ name, options: { valuesFiles: files } })),
  {
    name: "internetEgress.ports {443,8443}",
    options: { set: ["networkPolicy.internetEgress.ports={443,8443}"] },
  },
];

describe.each(cases)("webhook delivery ports rendered with $name", ({ options }) => {
  const objects = renderObjects(options);

  it("are one list: the NetworkPolicy's internet egress ports are the ports the API accepts", () => {
    const policies = ofKind<INetworkPolicy>(objects, "NetworkPolicy");
    const settings = new Map(
      ofKind<IConfigMap>(objects, "ConfigMap").map((map) => [componentOf(map), map.data!]),
    );
    let checked = 0;
    for (const policy of policies) {
      const component = componentOf(policy)!;
      const ports = internetPorts(policy);
      const allowed = settings.get(component)?.WEBHOOK_ALLOWED_PORTS;
      if (ports === undefined) {
        expect(allowed, component).toBeUndefined();
        continue;
      }
      checked++;
      expect(allowed?.split(",").map(Number), component).toEqual(ports);
    }
    if (policies.length > 0) expect(checked).toBeGreaterThan(0);
  });
});

it("leaves the ports open when the chart renders no NetworkPolicy", () => {
  const objects = renderObjects({ set: ["networkPolicy.enabled=false"] });
  for (const map of ofKind<IConfigMap>(objects, "ConfigMap")) {
    expect(map.data, componentOf(map)).not.toHaveProperty("WEBHOOK_ALLOWED_PORTS");
  }
});
