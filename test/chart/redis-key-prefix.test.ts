import { describe, expect, it } from "vitest";
import type { IConfigMap } from "kubernetes-models/v1";
import { loadGatewayConfig } from "@switchboard/gateway/config";
import { unreachableBackends } from "@switchboard/test-support/grpc";
import { componentOf, ofKind, renderObjects } from "./support/render.js";

const prefixes = (options: Parameters<typeof renderObjects>[0]) =>
  new Map(
    ofKind<IConfigMap>(renderObjects(options), "ConfigMap").map((map) => [
      componentOf(map),
      map.data!.REDIS_KEY_PREFIX,
    ]),
  );

describe("REDIS_KEY_PREFIX (the gateway's rate-limit buckets and caches)", () => {
  it("is the release's own, so two releases on one Redis share no bucket", () => {
    const first = prefixes({ release: "blue" });
    const second = prefixes({ release: "green" });
    expect(first.get("gateway")).toBe("blue-switchboard:");
    expect(second.get("gateway")).toBe("green-switchboard:");
    for (const [component, prefix] of first) {
      expect(prefix, component).toBeTruthy();
      expect(second.get(component), component).not.toBe(prefix);
    }
  });

  it("is the gateway's own default for the default release name (an upgrade moves no key)", () => {
    const defaultPrefix = loadGatewayConfig({
      ...unreachableBackends,
      DATABASE_URL: "postgres://127.0.0.1:9/none",
    }).policies.redisKeyPrefix;
    expect(prefixes({}).get("gateway")).toBe(defaultPrefix);
  });

  it("is yours when env.REDIS_KEY_PREFIX says so", () => {
    expect(prefixes({ set: ["env.REDIS_KEY_PREFIX=acme:"] }).get("gateway")).toBe("acme:");
  });
});
