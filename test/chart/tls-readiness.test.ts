import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHealth, createHealthClient } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { testRedisUrl } from "@switchboard/test-support/platform";
import { eventually } from "@switchboard/test-support/waiting";
import {
  freePort,
  issueGrpcTlsFiles,
  startServiceProcess,
  type ServiceProcess,
} from "./support/service-process.js";

// What the chart's readiness probe meets with grpcTls.enabled (ci/production-values.yaml): a
// service whose gRPC port demands mutual TLS. The kubelet's gRPC probe speaks plaintext and gets
// nothing; the admin port's /readyz (the chart's probe) answers from the same dependency watch.
describe("a service with gRPC TLS on", () => {
  let database: TestDatabase;
  let service: ServiceProcess;
  let adminUrl: string;
  let grpcAddress: string;
  let tls: ReturnType<typeof issueGrpcTlsFiles>;

  beforeAll(async () => {
    database = await createRealTestDatabase("tlsready");
    tls = issueGrpcTlsFiles();
    const [adminPort, grpcPort] = [await freePort(), await freePort()];
    adminUrl = `http://127.0.0.1:${adminPort}`;
    grpcAddress = `localhost:${grpcPort}`;
    service = startServiceProcess("services/inventory/dist/main.js", {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      REDIS_QUEUE_PREFIX: `sbtls_${randomBytes(4).toString("hex")}`,
      INTERNAL_SECRET: randomBytes(32).toString("base64url"),
      ADMIN_PORT: String(adminPort),
      INVENTORY_GRPC_PORT: String(grpcPort),
      GRPC_TLS_CERT: tls.cert,
      GRPC_TLS_KEY: tls.key,
      GRPC_TLS_CA: tls.ca,
    });
  }, 30_000);

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
  });

  it("is ready by GET /readyz on the admin port, and not by a plaintext gRPC health check", async () => {
    const ready = await eventually(
      async () => (await fetch(`${adminUrl}/readyz`).catch(() => undefined))?.status,
      (status) => status === 200,
      30_000,
    );
    expect(ready, service.output().slice(-2000)).toBe(200);
    const plaintext = createHealthClient(grpcAddress);
    const mutual = createHealthClient(grpcAddress, tls);
    try {
      expect(await checkHealth(plaintext, "", 2_000)).toBe("UNREACHABLE");
      expect(await checkHealth(mutual, "", 2_000)).toBe("SERVING");
    } finally {
      plaintext.close();
      mutual.close();
    }
  }, 40_000);
});
