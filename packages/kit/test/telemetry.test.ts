import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import {
  consumeEvents,
  createLogger,
  createMemoryBus,
  DomainError,
  publishEventBatch,
  injectTraceContext,
  runWithTraceContext,
  traceHttpServer,
  traceExportRequested,
} from "../src/index.js";
import { serviceNameFromEntry } from "../src/telemetry/env.js";
import { captureLogs, installInMemoryTracing, spanText } from "@switchboard/test-support/tracing";

const tracing = installInMemoryTracing();
const tracer = trace.getTracer("telemetry-test");
const job = { queue: "events.test", jobName: "number.held", jobId: "evt_1", attempt: 2 };
let seen = 0;
const newSpans = () => {
  const all = tracing.spans();
  const fresh = all.slice(seen);
  seen = all.length;
  return fresh;
};

/** Runs `work` inside an active span and returns that span's context. */
async function inSpan<T>(work: () => T | Promise<T>) {
  return tracer.startActiveSpan("producer", async (span) => {
    const result = await work();
    span.end();
    return { result, producer: span.spanContext() };
  });
}

afterAll(() => tracing.stop());

describe("the events trace propagator (OpenTelemetry)", () => {
  beforeEach(() => void newSpans());

  it("injects the active span as a W3C carrier, and nothing outside a span", async () => {
    expect(injectTraceContext()).toBeUndefined();
    const { result, producer } = await inSpan(() => injectTraceContext());
    expect(result).toEqual({ traceparent: `00-${producer.traceId}-${producer.spanId}-01` });
  });

  it("runs a job in a CONSUMER span that is a child of the carried context", async () => {
    const { result: carrier, producer } = await inSpan(() => injectTraceContext());
    let active: string | undefined;
    await runWithTraceContext(carrier, { ...job, link: false }, async () => {
      active = trace.getActiveSpan()?.spanContext().spanId;
    });
    const consumer = newSpans().find((s) => s.name === "process events.test")!;
    expect(consumer.kind).toBe(SpanKind.CONSUMER);
    expect(consumer.spanContext().traceId).toBe(producer.traceId);
    expect(consumer.parentSpanContext?.spanId).toBe(producer.spanId);
    expect(consumer.links).toEqual([]);
    expect(active).toBe(consumer.spanContext().spanId);
    expect(consumer.attributes).toMatchObject({
      "messaging.destination.name": "events.test",
      "messaging.message.id": "evt_1",
      "switchboard.job.attempt": 2,
    });
  });

  it("runs a fan-out job as the root of a new trace with a link to the carried context", async () => {
    const { result: carrier, producer } = await inSpan(() => injectTraceContext());
    await runWithTraceContext(carrier, { ...job, link: true }, async () => undefined);
    const consumer = newSpans().find((s) => s.name === "process events.test")!;
    expect(consumer.parentSpanContext).toBeUndefined();
    expect(consumer.spanContext().traceId).not.toBe(producer.traceId);
    expect(consumer.links.map((l) => l.context)).toMatchObject([
      { traceId: producer.traceId, spanId: producer.spanId },
    ]);
  });

  it("traces each event of a batch as its own job, linked to its context; the batch opens no span", async () => {
    const bus = createMemoryBus();
    const carriers = await Promise.all([1, 2].map(() => inSpan(() => injectTraceContext())));
    const events = carriers.map(({ result }, i) => ({
      id: `evt_${i}`,
      type: "call.ringing",
      timestamp: new Date().toISOString(),
      account_id: "acct_1",
      resource_id: `call_${i}`,
      sequence: 1,
      data: {},
      ...(result ? { trace: result } : {}),
    }));
    let taken = 0;
    const worker = consumeEvents(bus, "test", async () => void (taken += 1), { batched: true });
    await publishEventBatch(bus, { name: "test", batched: true }, events);
    while (taken < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    await worker.close();
    await bus.close();
    const spans = newSpans().filter((s) => s.name.startsWith("process events.test"));
    expect(spans.map((s) => s.name)).toEqual(["process events.test", "process events.test"]);
    for (const [i, { producer }] of carriers.entries()) {
      const consumer = spans.find((s) => s.attributes["messaging.message.id"] === `evt_${i}`)!;
      expect(consumer.parentSpanContext).toBeUndefined();
      expect(consumer.links.map((l) => l.context)).toMatchObject([
        { traceId: producer.traceId, spanId: producer.spanId },
      ]);
    }
  });

  it("marks a failed try with its error type, never its message", async () => {
    const failing = runWithTraceContext(undefined, { ...job, link: false }, async () => {
      throw new DomainError("validation-failed", "body 'secret text' is too long");
    });
    await expect(failing).rejects.toThrow(DomainError);
    const consumer = newSpans().find((s) => s.name === "process events.test")!;
    expect(consumer.status.code).toBe(SpanStatusCode.ERROR);
    expect(consumer.status.message).toBeUndefined();
    expect(consumer.attributes["error.type"]).toBe("validation-failed");
    expect(spanText(consumer)).not.toContain("secret text");
  });
});

describe("the HTTP server span", () => {
  let server: Server;
  afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

  it("continues the caller's traceparent and records no query string, header or body", async () => {
    const middleware = traceHttpServer();
    server = createServer((req, res) =>
      middleware(req, res, () => {
        req.resume().on("end", () => res.writeHead(201).end("ok"));
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    await new Promise<void>((resolve, reject) => {
      const req = request(
        {
          port,
          method: "POST",
          path: "/oauth/token?client_secret=query-secret",
          headers: {
            traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
            authorization: "Basic header-secret",
          },
        },
        (res) => res.resume().on("end", resolve),
      );
      req.on("error", reject);
      req.end("client_secret=body-secret");
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const span = newSpans().find((s) => s.kind === SpanKind.SERVER)!;
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(span.attributes).toMatchObject({
      "http.request.method": "POST",
      "url.path": "/oauth/token",
      "http.response.status_code": 201,
    });
    expect(spanText(span)).not.toMatch(/query-secret|header-secret|body-secret/);
  });
});

describe("logs", () => {
  it("carry the active span's trace_id and span_id, and nothing outside a span", async () => {
    const logs = captureLogs();
    const logger = createLogger("telemetry-test", { level: "info" }, logs.stream);
    logger.info("outside");
    const { producer } = await inSpan(() => logger.info("inside"));
    const [outside, inside] = logs.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(outside).not.toHaveProperty("trace_id");
    expect(inside).toMatchObject({ trace_id: producer.traceId, span_id: producer.spanId });
  });

  it("redact secrets, tokens and message content under the names we use", () => {
    const logs = captureLogs();
    const logger = createLogger("telemetry-test", { level: "info" }, logs.stream);
    logger.info(
      {
        client_secret: "sbcs_one",
        request: { secrets: ["whsec_two"], body: "message three", variables: { code: "four" } },
        headers: { authorization: "Bearer sbt_five", cookie: "six" },
        message: { text: "seven" },
        accessToken: "eight",
      },
      "redaction",
    );
    expect(logs.lines[0]).not.toMatch(/sbcs_one|whsec_two|three|four|sbt_five|six|seven|eight/);
    expect(logs.lines[0]).toContain("[redacted]");
  });
});

describe("telemetry configuration", () => {
  it("exports only when an exporter or an OTLP endpoint is named", () => {
    expect(traceExportRequested({})).toBe(false);
    expect(traceExportRequested({ OTEL_TRACES_EXPORTER: "none" })).toBe(false);
    expect(traceExportRequested({ OTEL_TRACES_EXPORTER: "otlp" })).toBe(true);
    expect(traceExportRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(
      true,
    );
    expect(traceExportRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c/v1/traces" })).toBe(
      true,
    );
  });

  it("names a service after its entry point", () => {
    expect(serviceNameFromEntry("/app/services/call-control/dist/main.js")).toBe("call-control");
    expect(serviceNameFromEntry("/app/services/webhook/dist/worker-main.js")).toBe(
      "webhook-worker",
    );
    expect(serviceNameFromEntry("/app/gateway/dist/main.js")).toBe("gateway");
    expect(serviceNameFromEntry("/app/platform/dist/embedded.js")).toBe("switchboard");
    expect(serviceNameFromEntry(undefined)).toBe("switchboard");
  });
});
