import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";
import {
  attributeValue as valueOf,
  startOtlpCollector,
  type CollectedSpan,
  type OtlpCollector,
} from "@switchboard/test-support/otlp-collector";
import { leaks } from "@switchboard/test-support/tracing";
import {
  assignNumber,
  eventually,
  startMeshHarness,
  type MeshHarness,
} from "./support/mesh-harness.js";

// OTLP span kinds: 2 SERVER, 3 CLIENT, 5 CONSUMER.
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

/**
 * The preload in the mesh: every process started by the supervisor with
 * `--import @switchboard/kit/telemetry/register`, exporting OTLP (HTTP/JSON) to a collector on
 * loopback, configured by the standard variables only. One outbound call is one trace across
 * the gateway, call-control and inventory processes (with their PostgreSQL spans); the webhook
 * process's delivery links back to it.
 */
describe("traces across the mesh's processes (OTLP)", () => {
  let collector: OtlpCollector;
  let h: MeshHarness;
  let receiver: Receiver;
  const spans = () => collector.spans();

  beforeAll(async () => {
    collector = await startOtlpCollector();
    receiver = await startReceiver();
    h = await startMeshHarness({
      seed: 300,
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        SANDBOX_CALL_SECONDS: "0.5",
        SANDBOX_RING_DELAY_MS: "50",
        CALL_TIMER_POLL_MS: "100",
        WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*",
      },
    });
  });
  afterAll(async () => {
    await h?.stop();
    await receiver?.close();
    await collector?.close();
  });

  it("one POST /v1/api/calls/outbound: gateway → call-control → inventory in one trace, the delivery linked", async () => {
    const token = await h.token();
    const subscription = await h.request("/v1/api/webhooks/subscriptions", {
      method: "POST",
      token,
      json: { url: receiver.url, events: ["call.*"] },
    });
    const { secret } = (await subscription.json()) as { secret: string };
    await h.request("/v1/api/agents", { method: "POST", token, json: { name: "alice" } });
    const from = await assignNumber(h, token, "voice");
    const response = await h.request("/v1/api/calls/outbound", {
      method: "POST",
      token,
      json: { from, to: "+15550100000", agent: "alice" },
    });
    expect(response.status).toBe(201);
    const call = (await response.json()) as { id: string };
    const delivered = await eventually(
      async () => receiver.received.find((r) => r.body.includes(call.id)),
      (r) => r !== undefined,
      "a webhook of the call",
    );
    const eventType = (JSON.parse(delivered!.body) as { type: string }).type;

    const gateway = (await eventually(
      async () =>
        spans().find(
          (s) =>
            s.kind === SERVER && valueOf(s.attributes, "http.route") === "/v1/api/calls/outbound",
        ),
      (s) => s !== undefined,
      "the gateway's span",
    ))!;
    expect(gateway).toMatchObject({ service: "gateway", name: "POST /v1/api/calls/outbound" });
    expect(gateway.parentSpanId ?? "").toBe("");
    const inTrace = () => spans().filter((s) => s.traceId === gateway.traceId);
    const rpc = (service: string, method: string) =>
      inTrace().find(
        (s) =>
          s.kind === SERVER &&
          valueOf(s.attributes, "rpc.service") === service &&
          valueOf(s.attributes, "rpc.method") === method,
      );
    const callControl = (await eventually(
      async () => rpc("switchboard.callcontrol.v1.CallControlService", "CreateOutboundCall"),
      (s) => s !== undefined,
      "call-control's span",
    ))!;
    expect(callControl.service).toBe("call-control");
    // The caller id's owner: a number's first call reads it (call-control remembers it after).
    const inventory = (await eventually(
      async () => rpc("switchboard.inventory.v1.InventoryService", "FindNumberOwner"),
      (s) => s !== undefined,
      "inventory's span",
    ))!;
    expect(inventory.service).toBe("inventory");
    // Each server span's parent is the caller's client span, in the caller's process.
    const parentOf = (s: CollectedSpan) => inTrace().find((p) => p.spanId === s.parentSpanId);
    expect(parentOf(callControl)).toMatchObject({ kind: CLIENT, service: "gateway" });
    expect(parentOf(inventory)).toMatchObject({ kind: CLIENT, service: "call-control" });
    expect(parentOf(parentOf(callControl)!)?.spanId).toBe(gateway.spanId);
    // PostgreSQL, as the preload instruments it: statements of call-control's transaction.
    expect(
      inTrace().some((s) => s.service === "call-control" && s.scope.endsWith("instrumentation-pg")),
    ).toBe(true);

    // The webhook process: the delivery attempt links to the request's trace, its POST a child.
    const post = (await eventually(
      async () =>
        spans().find(
          (s) =>
            s.kind === CLIENT &&
            s.service === "webhook" &&
            valueOf(s.attributes, "switchboard.event.type") === eventType,
        ),
      (s) => s !== undefined,
      "the delivery's client span",
    ))!;
    // The attempt ends after its POST: it may come in a later export.
    const attempt = (await eventually(
      async () => spans().find((s) => s.spanId === post.parentSpanId),
      (s) => s !== undefined,
      "the delivery attempt's span",
    ))!;
    expect(attempt).toMatchObject({ kind: CONSUMER, name: "process webhook.deliveries" });
    expect(attempt.links?.some((l) => l.traceId === gateway.traceId)).toBe(true);

    // One span per hop: no library HTTP or gRPC spans besides ours, and nothing secret.
    const scopes = new Set(spans().map((s) => s.scope));
    expect([...scopes].sort()).toEqual(
      expect.arrayContaining(["@switchboard/kit", "@opentelemetry/instrumentation-pg"]),
    );
    expect([...scopes].filter((s) => /instrumentation-(http|grpc|express)/.test(s))).toEqual([]);
    expect(leaks([JSON.stringify(collector.exports)], { token, "webhook secret": secret })).toEqual(
      [],
    );
  });
});
