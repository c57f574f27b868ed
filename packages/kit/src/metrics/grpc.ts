import { status as GrpcStatus, type sendUnaryData } from "@grpc/grpc-js";
import { Counter, Histogram } from "prom-client";
import { latencyBuckets, metricsRegistry } from "./registry.js";

/** `grpc_<side>_handled_total{service,method,code}` and `grpc_<side>_handling_seconds{service,method}`. */
function sideMetrics(side: "server" | "client", whose: string) {
  return {
    handled: new Counter({
      name: `grpc_${side}_handled_total`,
      help: `gRPC calls ${whose} that completed, by service, method and status code`,
      labelNames: ["service", "method", "code"] as const,
      registers: [metricsRegistry],
    }),
    handling: new Histogram({
      name: `grpc_${side}_handling_seconds`,
      help: `Time until a gRPC call ${whose} completed, by service and method`,
      labelNames: ["service", "method"] as const,
      buckets: latencyBuckets,
      registers: [metricsRegistry],
    }),
  };
}

const server = sideMetrics("server", "handled by this server");
const client = sideMetrics("client", "made by this process");

/** `/switchboard.inventory.v1.InventoryService/SearchNumbers` → its service and method labels. */
export function grpcMethodLabels(path: string): { service: string; method: string } {
  const slash = path.lastIndexOf("/");
  if (slash <= 0) return { service: "unknown", method: path.replace(/^\//, "") || "unknown" };
  return { service: path.slice(1, slash), method: path.slice(slash + 1) };
}

/** `0` → `OK`, `14` → `UNAVAILABLE`: the code label uses the canonical names. */
export const grpcCodeName = (code: number): string =>
  (GrpcStatus as unknown as Record<number, string>)[code] ?? "UNKNOWN";

const timer = ({ handled, handling }: ReturnType<typeof sideMetrics>) => {
  return (path: string): ((code: number) => void) => {
    const labels = grpcMethodLabels(path);
    const started = process.hrtime.bigint();
    let done = false;
    return (code) => {
      if (done) return;
      done = true;
      handling.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      handled.inc({ ...labels, code: grpcCodeName(code) });
    };
  };
};

/** Starts timing a call this server handles; call the result once with the status code sent. */
export const startGrpcServerTimer = timer(server);

/** Starts timing a call this process makes; call the result once with the status code received. */
export const startGrpcClientTimer = timer(client);

/** Wraps a unary call's callback so the reply (its status code and the time taken) is counted. */
export function meteredCallback<Res>(
  path: string,
  callback: sendUnaryData<Res>,
): sendUnaryData<Res> {
  const finish = startGrpcServerTimer(path);
  return (error, value, trailer, flags) => {
    finish(error ? (error.code ?? GrpcStatus.UNKNOWN) : GrpcStatus.OK);
    callback(error, value, trailer, flags);
  };
}
