import { makeGenericClientConstructor, type Client } from "@grpc/grpc-js";
import { grpcClientCredentials, grpcTlsChannelOptions, type GrpcTlsFiles } from "./grpc-tls.js";
import { service as healthService } from "grpc-health-check";

export type HealthState = "SERVING" | "NOT_SERVING" | "UNKNOWN" | "UNREACHABLE";

const HealthClient = makeGenericClientConstructor(
  healthService as unknown as Parameters<typeof makeGenericClientConstructor>[0],
  "Health",
);

/** A `grpc.health.v1.Health` client for readiness checks of a backend. */
export function createHealthClient(address: string, tls?: GrpcTlsFiles): Client {
  return new HealthClient(address, grpcClientCredentials(tls), grpcTlsChannelOptions(tls));
}

/** Asks a backend for its serving status; any failure or timeout is UNREACHABLE. */
export function checkHealth(
  client: Client,
  service = "",
  deadlineMs = 1_000,
): Promise<HealthState> {
  const check = (client as unknown as Record<string, unknown>)["Check"] as (
    request: { service: string },
    options: { deadline: Date },
    callback: (error: Error | null, response?: { status?: string }) => void,
  ) => void;
  return new Promise((resolve) => {
    check.call(
      client,
      { service },
      { deadline: new Date(Date.now() + deadlineMs) },
      (error, response) => {
        if (error || !response) return resolve("UNREACHABLE");
        const status = response.status;
        resolve(status === "SERVING" || status === "NOT_SERVING" ? status : "UNKNOWN");
      },
    );
  });
}
