import { randomBytes } from "node:crypto";
import { SpanKind } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@switchboard/kit";
import { requireTestRedis } from "@switchboard/kit/events/testing";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";
import { createTemplate, sendWithConsent } from "@switchboard/test-support/fixtures/messages";
import { assignNumbers } from "@switchboard/test-support/fixtures/numbers";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";
import {
  captureLogs,
  installInMemoryTracing,
  leaks,
  spanText,
  type CapturedLogs,
} from "@switchboard/test-support/tracing";

// npm test needs Redis (README): a Redis that is down fails this suite, never skips it.
await requireTestRedis();

// Registered before the platform starts: every span of the run lands in memory.
const tracing = installInMemoryTracing();

const waitFor = async <T>(read: () => T | undefined, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

/**
 * docs/architecture.md rules 7–8 end to end, in process, on PostgreSQL and Redis (BullMQ): one
 * outbound call is one trace from the gateway through call-control and inventory, its events
 * cross the queue into linked consumer traces, and its webhook delivery links back to it; and
 * nothing secret reaches a span or a log line.
 */
describe("tracing and logs across the platform (PostgreSQL + Redis)", () => {
  let p: TestPlatform;
  let logs: CapturedLogs;
  let receiver: Receiver;
  let token: string;
  let webhookSecret: string;
  const numbers: string[] = [];

  beforeAll(async () => {
    logs = captureLogs();
    p = await startTestPlatform({
      database: "postgres",
      redis: true,
      seed: 200,
      logger: createLogger("tracing-e2e", { level: "trace" }, logs.stream),
      serviceEnv: {
        SANDBOX_CALL_SECONDS: "0.3",
        SANDBOX_RING_DELAY_MS: "30",
        CALL_TIMER_POLL_MS: "100",
        SANDBOX_RECEIPT_DELAY_MS: "40",
        MESSAGING_RELAY_POLL_MS: "20",
        WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*",
      },
    });
    receiver = await startReceiver();
    token = await p.token();
    const agent = await p.request("/v1/api/agents", {
      method: "POST",
      token,
      json: { name: "alice" },
    });
    expect(agent.status).toBe(201);
    const subscription = await p.request("/v1/api/webhooks/subscriptions", {
      method: "POST",
      token,
      json: { url: receiver.url, events: ["call.*", "message.*"] },
    });
    expect(subscription.status).toBe(201);
    webhookSecret = ((await subscription.json()) as { secret: string }).secret;
    numbers.push(...(await assignNumbers(p, token, { capabilities: "voice,sms", count: 2 })));
  });
  afterAll(async () => {
    await receiver?.close();
    await p?.stop();
    await tracing.stop();
  });

  const byId = () => new Map(tracing.spans().map((s) => [s.spanContext().spanId, s]));
  /** True when `ancestor` is on `span`'s parent chain. */
  const descends = (span: ReadableSpan, ancestor: ReadableSpan, spans = byId()): boolean => {
    for (let at = span.parentSpanContext?.spanId; at;) {
      if (at === ancestor.spanContext().spanId) return true;
      at = spans.get(at)?.parentSpanContext?.spanId;
    }
    return false;
  };
  const serverSpan = (service: string, method: string) => (s: ReadableSpan) =>
    s.kind === SpanKind.SERVER &&
    s.attributes["rpc.service"] === service &&
    s.attributes["rpc.method"] === method;

  it("one POST /v1/api/calls/outbound is one trace: gateway → call-control → inventory → queue → webhook delivery", async () => {
    const response = await p.request("/v1/api/calls/outbound", {
      method: "POST",
      token,
      json: { from: numbers[0], to: "+15550100000", agent: "alice" },
    });
    expect(response.status).toBe(201);
    const call = (await response.json()) as { id: string };

    // The gateway's server span is the root of the request's trace.
    const gateway = await waitFor(
      () =>
        tracing
          .spans()
          .find(
            (s) =>
              s.kind === SpanKind.SERVER && s.attributes["url.path"] === "/v1/api/calls/outbound",
          ),
      "the gateway span",
    );
    expect(gateway.parentSpanContext).toBeUndefined();
    expect(gateway.name).toBe("POST /v1/api/calls/outbound");
    expect(gateway.attributes).toMatchObject({
      "http.route": "/v1/api/calls/outbound",
      "http.response.status_code": 201,
    });
    const traceId = gateway.spanContext().traceId;
    const inTrace = () => tracing.spans().filter((s) => s.spanContext().traceId === traceId);

    // gRPC: gateway → call-control (client span, then server span), call-control → inventory
    // (the caller id's owner: a number's first call reads it; call-control remembers it after).
    const callControl = inTrace().find(
      serverSpan("switchboard.callcontrol.v1.CallControlService", "CreateOutboundCall"),
    )!;
    expect(callControl).toBeDefined();
    expect(descends(callControl, gateway)).toBe(true);
    expect(byId().get(callControl.parentSpanContext!.spanId)?.kind).toBe(SpanKind.CLIENT);
    const inventory = inTrace().find(
      serverSpan("switchboard.inventory.v1.InventoryService", "FindNumberOwner"),
    )!;
    expect(inventory).toBeDefined();
    expect(descends(inventory, callControl)).toBe(true);

    // The webhook delivery of the call's first event: its receiver saw it…
    const delivered = await waitFor(
      () => receiver.received.find((r) => r.body.includes(call.id)),
      "a webhook of the call",
    );
    const eventType = (JSON.parse(delivered.body) as { type: string }).type;
    // …and its attempt ran in a CONSUMER span linked (fan-out) to the request's trace, with
    // the POST as its CLIENT child.
    const linksHere = (s: ReadableSpan) => s.links.some((l) => l.context.traceId === traceId);
    const post = await waitFor(
      () =>
        tracing
          .spans()
          .find(
            (s) =>
              s.kind === SpanKind.CLIENT &&
              s.attributes["switchboard.event.type"] === eventType &&
              linksHere(byId().get(s.parentSpanContext?.spanId ?? "") ?? s),
          ),
      "the delivery's client span",
    );
    const attempt = byId().get(post.parentSpanContext!.spanId)!;
    expect(attempt).toMatchObject({ kind: SpanKind.CONSUMER, name: "process webhook.deliveries" });
    expect(attempt.parentSpanContext).toBeUndefined();
    expect(post.attributes).toMatchObject({
      "http.request.method": "POST",
      "server.address": "localhost",
      "server.port": receiver.port,
      "http.response.status_code": 200,
    });

    // The queue: the fan-out consumer and the delivery both link to the producer, the span in
    // which call-control recorded the event (inside its server span).
    const fanOut = tracing
      .spans()
      .find((s) => s.name === "process events.webhook" && linksHere(s))!;
    expect(fanOut).toMatchObject({ kind: SpanKind.CONSUMER });
    expect(fanOut.parentSpanContext).toBeUndefined();
    const producerIds = [fanOut, attempt].map(
      (s) => s.links.find((l) => l.context.traceId === traceId)!.context.spanId,
    );
    expect(new Set(producerIds).size).toBe(1);
    const producer = inTrace().find((s) => s.spanContext().spanId === producerIds[0])!;
    expect(producer === callControl || descends(producer, callControl)).toBe(true);

    // Logs of the delivery attempt carry its trace.
    const attemptLog = logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((l) => l.msg === "webhook attempt" && l.span_id === attempt.spanContext().spanId);
    expect(attemptLog?.trace_id).toBe(attempt.spanContext().traceId);
  });

  it("a log and span scan finds no token, client secret, webhook secret or message body", async () => {
    const marker = `trace-scan-${randomBytes(6).toString("hex")}`;
    const template = await createTemplate(p, token, "Your code is {{code}}.", ["sms"]);
    const message = await sendWithConsent(p, token, {
      to: `+1555020${String(Math.floor(Math.random() * 1000)).padStart(3, "0")}0`,
      from: numbers[1]!,
      templateId: template.id,
      extra: { variables: { code: `${marker}-outbound` } },
    });
    const inbound = await p.request("/v1/api/sandbox/messages/inbound", {
      method: "POST",
      token,
      json: { from: "+15550209991", to: numbers[1], body: `${marker}-inbound` },
    });
    expect(inbound.status).toBe(201);
    // The webhooks of both messages were delivered (bodies crossed the queue and the POST).
    await waitFor(
      () => receiver.received.find((r) => r.body.includes(`${marker}-inbound`)),
      "the inbound message's webhook",
    );
    await waitFor(
      () =>
        receiver.received.find((r) => r.body.includes(message.id) && r.body.includes("delivered")),
      "the delivered message's webhook",
    );
    await new Promise((resolve) => setTimeout(resolve, 200));

    const secrets = {
      token,
      "client secret": p.clientSecret,
      "webhook secret": webhookSecret,
      "message body": marker,
    };
    // The scanner finds what is there…
    expect(leaks([`Bearer ${token}`, `x${webhookSecret}`], secrets)).toEqual([
      "token",
      "webhook secret",
    ]);
    // …and the run left nothing.
    const spans = tracing.spans();
    expect(spans.length).toBeGreaterThan(50);
    expect(logs.lines.length).toBeGreaterThan(20);
    expect(leaks(spans.map(spanText), secrets)).toEqual([]);
    expect(leaks(logs.lines, secrets)).toEqual([]);
  });
});
