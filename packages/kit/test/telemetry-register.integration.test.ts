import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireTestRedis, testRedisUrl } from "../src/events/testing.js";
import { createRealTestDatabase, type TestDatabase } from "../src/testing.js";
import {
  attributeValue,
  startOtlpCollector,
  type OtlpCollector,
} from "@switchboard/test-support/otlp-collector";

// npm test needs Redis (README): a Redis that is down fails this suite, never skips it.
await requireTestRedis();

const root = fileURLToPath(new URL("../../../", import.meta.url));
const child = fileURLToPath(new URL("./fixtures/telemetry-child.mjs", import.meta.url));

/**
 * The preload as the mesh runs it (`node --import @switchboard/kit/telemetry/register`, the
 * built kit), with an OTLP/HTTP JSON collector on loopback: the pg and ioredis instrumentations
 * patch ESM imports, record statements and command names but never values, stay silent outside
 * a traced operation, and the standard variables alone decide what is exported.
 */
describe("the telemetry preload", () => {
  let collector: OtlpCollector;
  let database: TestDatabase;
  const secret = `preload-secret-${randomBytes(6).toString("hex")}`;

  beforeAll(async () => {
    database = await createRealTestDatabase("telemetry");
    collector = await startOtlpCollector();
  });
  afterAll(async () => {
    await collector?.close();
    await database?.drop();
  });

  const run = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const clean = Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !key.startsWith("OTEL_")),
      );
      const proc = spawn(
        process.execPath,
        [
          "--import",
          "@switchboard/kit/telemetry/register",
          child,
          database.url,
          testRedisUrl(),
          secret,
        ],
        { cwd: root, env: { ...clean, OTEL_BSP_SCHEDULE_DELAY: "50", ...env } },
      );
      let stdout = "";
      let stderr = "";
      proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      proc.on("error", reject);
      proc.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  it("exports pg and ioredis spans over OTLP with statements and command names, never values", async () => {
    const result = await run({
      OTEL_SERVICE_NAME: "preload-test",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const spans = collector.spans();
    const query = spans.find(
      (s) => attributeValue(s.attributes, "db.query.text") === "SELECT $1::text AS value",
    );
    expect(query?.scope).toBe("@opentelemetry/instrumentation-pg");
    const set = spans.find((s) => s.scope === "@opentelemetry/instrumentation-ioredis");
    expect(set && attributeValue(set.attributes, "db.query.text")).toBe("set");
    // Outside a traced operation (pollers), no database span at all.
    expect(spans.some((s) => JSON.stringify(s).includes("untraced"))).toBe(false);
    expect(attributeValue(query!.resource, "service.name")).toBe("preload-test");
    expect(attributeValue(query!.resource, "process.command_args")).toBeUndefined();
    expect(JSON.stringify(collector.exports)).not.toContain(secret);
  });

  it("without an exporter variable: trace ids and context, nothing recorded or sent", async () => {
    const before = collector.exports.length;
    const result = await run({});
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const { traceId, traceFlags } = JSON.parse(result.stdout) as {
      traceId: string;
      traceFlags: number;
    };
    expect(traceId).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
    expect(traceFlags).toBe(0);
    expect(collector.exports.length).toBe(before);
  });

  it("OTEL_SDK_DISABLED=true starts nothing, whatever else is set", async () => {
    const before = collector.exports.length;
    const result = await run({
      OTEL_SDK_DISABLED: "true",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect((JSON.parse(result.stdout) as { traceId: string }).traceId).toBe("0".repeat(32));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(collector.exports.length).toBe(before);
  });
});
