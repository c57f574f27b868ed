import { gatewaySettings } from "@switchboard/gateway";
import {
  grpcHostVariable,
  loadConfig,
  runComponent,
  signingKeySecretOf,
  type ComponentDeclaration,
} from "@switchboard/kit";
import { serviceComponents } from "@switchboard/platform";
import { unreachableBackends } from "@switchboard/test-support/grpc";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const secret = "s".repeat(32);
const gatewayRequired = { DATABASE_URL: "postgres://x", ...unreachableBackends };
/** Whether a settings schema reads SIGNING_KEY_SECRET (inventory seals no keys). */
const sealsKeys = (schema: z.ZodType) =>
  "SIGNING_KEY_SECRET" in
  ((z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as { properties?: object })
    .properties ?? {});

const settings = [
  ["gateway", gatewaySettings, gatewayRequired] as const,
  ...serviceComponents
    .filter((c) => sealsKeys(c.settings))
    .map((c) => [c.name, c.settings, {}] as const),
];

// docs/architecture.md rule 6: production refuses the development secret.
describe("NODE_ENV=production refuses the development signing secret", () => {
  it.each(settings)("%s", (_name, schema, required) => {
    const production = { ...required, NODE_ENV: "production", CARRIER: "sandbox" };
    expect(() => loadConfig(schema, production)).toThrow(
      /SIGNING_KEY_SECRET: is required in production/,
    );
    expect(() => loadConfig(schema, { ...production, SIGNING_KEY_SECRET: secret })).not.toThrow();
  });

  it("hands out the development secret only outside production", () => {
    expect(signingKeySecretOf({ SIGNING_KEY_SECRET: secret })).toBe(secret);
    expect(signingKeySecretOf({ NODE_ENV: "development" })).toMatch(/development/);
    expect(() => signingKeySecretOf({ NODE_ENV: "production" })).toThrow(/required in production/);
  });
});

// Issue 27: the development secret is public; a gateway others can reach must not seal with it.
describe("a gateway listening beyond loopback refuses the development signing secret", () => {
  it.each(["0.0.0.0", "::", "192.0.2.7"])("HOST=%s", (host) => {
    const reachable = { ...gatewayRequired, NODE_ENV: "development", HOST: host };
    expect(() => loadConfig(gatewaySettings, reachable)).toThrow(
      /SIGNING_KEY_SECRET: is required when HOST .* is not a loopback address/,
    );
    expect(() =>
      loadConfig(gatewaySettings, { ...reachable, SIGNING_KEY_SECRET: secret }),
    ).not.toThrow();
  });

  it.each(["127.0.0.1", "127.0.0.53", "::1", "localhost"])("but not HOST=%s", (host) => {
    const local = { ...gatewayRequired, NODE_ENV: "development", HOST: host };
    expect(() => loadConfig(gatewaySettings, local)).not.toThrow();
  });
});

describe("a service listening beyond loopback refuses the development signing secret", () => {
  const processEnv = (name: string, host: string): NodeJS.ProcessEnv => ({
    ...unreachableBackends,
    NODE_ENV: "development",
    DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
    REDIS_URL: "redis://127.0.0.1:1",
    [grpcHostVariable(name)]: host,
  });

  it.each(settings.filter(([name]) => name !== "gateway"))("%s", async (name) => {
    const component: ComponentDeclaration = serviceComponents.find((c) => c.name === name)!;
    await expect(runComponent(component, processEnv(name, "0.0.0.0"))).rejects.toThrow(
      new RegExp(
        `SIGNING_KEY_SECRET: is required when ${grpcHostVariable(name)} \\(0\\.0\\.0\\.0\\)`,
      ),
    );
  });
});
