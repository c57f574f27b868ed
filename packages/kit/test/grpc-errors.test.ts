import {
  Client,
  credentials,
  Server,
  ServerCredentials,
  status,
  type ServiceError,
} from "@grpc/grpc-js";
import { rpcErrorDetails, rpcStatus } from "@switchboard/proto";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DomainError, fromGrpcError, unary, validationFailed } from "../src/index.js";

const path = "/switchboard.test.v1.Errors/Fail";
const raw = (value: Buffer) => value;
const failures: Record<string, () => Error> = {
  validation: () =>
    validationFailed([
      { pointer: "/to", detail: "must be an E.164 number" },
      { pointer: "#/query/limit", detail: "must be at most 200" },
    ]),
  busy: () =>
    new DomainError("seat-busy", "the seat is at its limit", {
      retryAfter: 2,
      extensions: { seat_id: "seat_1", max_concurrent_calls: 3 },
    }),
  unknown: () => new Error('relation "calls" does not exist'),
};

/** A real grpc-js server whose one method throws the failure its request names. */
function startServer(): Promise<{ server: Server; port: number }> {
  const server = new Server();
  const fail = async (request: Buffer) => {
    throw failures[request.toString("utf8")]!();
  };
  server.addService(
    {
      Fail: {
        path,
        requestStream: false,
        responseStream: false,
        requestSerialize: raw,
        requestDeserialize: raw,
        responseSerialize: raw,
        responseDeserialize: raw,
      },
    },
    { Fail: unary(pino({ level: "silent" }), fail) },
  );
  return new Promise((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve({ server, port }),
    ),
  );
}

let server: Server;
let client: Client;

const call = (failure: string): Promise<ServiceError> =>
  new Promise((resolve, reject) =>
    client.makeUnaryRequest(path, raw, raw, Buffer.from(failure), (error) =>
      error ? resolve(error) : reject(new Error("the call succeeded")),
    ),
  );

beforeAll(async () => {
  const started = await startServer();
  server = started.server;
  client = new Client(`127.0.0.1:${started.port}`, credentials.createInsecure());
});

afterAll(() => {
  client.close();
  server.forceShutdown();
});

describe("DomainErrors across gRPC", () => {
  it("travel as a google.rpc.Status with ErrorInfo and BadRequest field violations", async () => {
    const error = await call("validation");
    expect(error.code).toBe(status.INVALID_ARGUMENT);

    const [details] = error.metadata.get("grpc-status-details-bin");
    const decoded = rpcStatus.Status.decode(details as Buffer);
    expect(decoded.code).toBe(status.INVALID_ARGUMENT);
    const byType = new Map(decoded.details.map((d) => [d.typeUrl, d.value]));
    const info = rpcErrorDetails.ErrorInfo.decode(
      byType.get("type.googleapis.com/google.rpc.ErrorInfo")!,
    );
    expect(info).toMatchObject({ reason: "validation-failed", domain: "switchboard" });
    const badRequest = rpcErrorDetails.BadRequest.decode(
      byType.get("type.googleapis.com/google.rpc.BadRequest")!,
    );
    expect(badRequest.fieldViolations).toEqual([
      { field: "/to", description: "must be an E.164 number" },
      { field: "#/query/limit", description: "must be at most 200" },
    ]);

    const domain = fromGrpcError(error, "test");
    expect(domain.kind).toBe("validation-failed");
    expect(domain.detail).toBe("/to: must be an E.164 number; #/query/limit: must be at most 200");
    expect(domain.meta.errors).toEqual([
      { pointer: "/to", detail: "must be an E.164 number" },
      { pointer: "#/query/limit", detail: "must be at most 200" },
    ]);
  });

  it("keep their meta (retry-after, typed extensions)", async () => {
    const domain = fromGrpcError(await call("busy"), "test");
    expect(domain.kind).toBe("seat-busy");
    expect(domain.detail).toBe("the seat is at its limit");
    expect(domain.meta).toEqual({
      retryAfter: 2,
      extensions: { seat_id: "seat_1", max_concurrent_calls: 3 },
    });
  });

  it("mask an unknown server error as internal", async () => {
    const error = await call("unknown");
    expect(error.code).toBe(status.INTERNAL);
    expect(error.details).toBe("internal error");
    expect(error.metadata.get("grpc-status-details-bin")).toEqual([]);
    const domain = fromGrpcError(error, "test");
    expect(domain.kind).toBe("internal");
    expect(domain.detail).toBe("internal error");
  });

  it("map an unreachable service to service-unavailable", async () => {
    const unreachable = new Client("127.0.0.1:1", credentials.createInsecure());
    const error = await new Promise<ServiceError>((resolve) =>
      unreachable.makeUnaryRequest(
        path,
        raw,
        raw,
        Buffer.from("x"),
        { deadline: Date.now() + 2000 },
        (e) => resolve(e!),
      ),
    );
    unreachable.close();
    expect(fromGrpcError(error, "test")).toMatchObject({
      kind: "service-unavailable",
      meta: { retryAfter: 1 },
    });
  });
});
