import { describe, expect, it } from "vitest";
import {
  createLogger,
  decodeCursor,
  DomainError,
  encodeCursor,
  newId,
  UnrecoverableJobError,
  type EventEnvelope,
} from "@switchboard/kit";
import { usage } from "@switchboard/proto";
import { factDraft } from "../src/fact-records.js";
import { cursorBinding, listFilters } from "../src/list-filters.js";
import { requestDrafts } from "../src/request-records.js";
import { requestRecord } from "./harness.js";

const logger = createLogger("usage-test", { level: "silent" });

const event = (
  type: string,
  data: Record<string, unknown>,
): EventEnvelope<Record<string, unknown>> => ({
  id: newId("evt"),
  type,
  timestamp: "2026-11-21T07:00:00.123456Z",
  account_id: "acct_test",
  resource_id: "call_01jd0000000000000000000000",
  sequence: 3,
  data,
});

describe("business facts", () => {
  it("maps each kind to its quantity and unit, copying only allow-listed data", () => {
    const completed = factDraft(
      event("call.completed", {
        duration_seconds: 42,
        to: "+15550100000",
        secret: "x",
        body: "hi",
      }),
    );
    expect(completed).toMatchObject({
      kind: "call.completed",
      quantity: 42,
      unit: "second",
      occurred_at: "2026-11-21T07:00:00.123Z",
      account_id: "acct_test",
      resource_id: "call_01jd0000000000000000000000",
      method: null,
      route: null,
      status: null,
      replayed: null,
      attributes: { to: "+15550100000" },
    });
    expect(factDraft(event("message.sent", { segments: 3, body: "never copied" }))).toMatchObject({
      quantity: 3,
      unit: "segment",
      attributes: {},
    });
    expect(factDraft(event("number.held", { hold_id: "hld_x" }))).toMatchObject({
      quantity: 1,
      unit: "hold",
      attributes: { hold_id: "hld_x" },
    });
    expect(factDraft(event("smoke.run", {}))?.unit).toBe("run");
  });

  it("records the source event id and a request id the event carries", () => {
    const requestId = newId("req");
    const source = event("call.placed", { request_id: requestId, principal: "cli_test" });
    expect(factDraft(source)).toMatchObject({
      eventId: source.id,
      request_id: requestId,
      principal: "cli_test",
    });
    expect(factDraft(event("call.placed", { request_id: "not-a-request" }))?.request_id).toBeNull();
  });

  it("ignores event types the ledger does not record", () => {
    expect(factDraft(event("number.released", {}))).toBeUndefined();
    expect(factDraft(event("api.request", {}))).toBeUndefined();
  });

  it("fails for good an event without its quantity, never inventing one", () => {
    for (const value of [undefined, -1, 1.5, "12"]) {
      expect(() => factDraft(event("call.completed", { duration_seconds: value }))).toThrow(
        UnrecoverableJobError,
      );
    }
  });
});

describe("gateway records", () => {
  it("turns a batch into api.request drafts, latency rounded to microseconds", () => {
    const record = requestRecord({ latencyMs: 1.23456789, replayed: true, route: undefined });
    // As the gateway's record outbox keeps it (JSON) and the relay hands it over.
    const [draft] = requestDrafts([JSON.parse(JSON.stringify(record))], logger);
    expect(draft).toMatchObject({
      kind: "api.request",
      request_id: record.requestId,
      route: null,
      replayed: true,
      quantity: 1,
      unit: "request",
      attributes: { latency_ms: 1.235 },
      eventId: null,
    });
  });

  it("leaves out records the ledger cannot hold and keeps the rest", () => {
    const good = requestRecord();
    const bad = [
      requestRecord({ requestId: "nope" }),
      requestRecord({ occurredAt: "yesterday" }),
      requestRecord({ accountId: "" }),
      requestRecord({ method: "get it" }),
      requestRecord({ route: "no-slash" }),
      requestRecord({ status: 99 }),
      requestRecord({ latencyMs: -1 }),
    ];
    const drafts = requestDrafts([...bad, good], logger);
    expect(drafts.map((d) => d.request_id)).toEqual([good.requestId]);
    expect(requestDrafts([], logger)).toEqual([]);
  });
});

describe("listing inputs", () => {
  const request = (
    overrides: Partial<usage.ListUsageEventsRequest> = {},
  ): usage.ListUsageEventsRequest => ({
    accountId: "acct_test",
    limit: 0,
    cursor: "",
    ...overrides,
  });

  it("defaults the limit and normalises times", () => {
    expect(listFilters(request({ since: "2026-11-21T08:00:00+01:00" }))).toMatchObject({
      limit: 50,
      since: "2026-11-21T07:00:00.000Z",
    });
  });

  it("reports every bad filter at once with query pointers", () => {
    try {
      listFilters(
        request({ kind: usage.UsageKind.UNSPECIFIED, since: "monday", limit: 201, resourceId: "" }),
      );
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      const pointers = (error as DomainError).meta.errors?.map((e) => e.pointer);
      expect(pointers).toEqual([
        "#/query/kind",
        "#/query/resource_id",
        "#/query/since",
        "#/query/limit",
      ]);
    }
    expect(() =>
      listFilters(request({ since: "2026-11-21T00:00:00Z", until: "2026-11-20T00:00:00Z" })),
    ).toThrow(/until/);
  });

  it("binds a cursor to its filters and refuses altered ones", () => {
    const binding = cursorBinding(listFilters(request({ kind: usage.UsageKind.API_REQUEST })));
    const cursor = encodeCursor(binding, ["2026-11-21T07:00:00.123456Z", newId("use")]);
    expect(decodeCursor(cursor, binding, ["instant", "id"])[0]).toBe("2026-11-21T07:00:00.123456Z");
    const other = cursorBinding(listFilters(request({ kind: usage.UsageKind.SMOKE_RUN })));
    expect(() => decodeCursor(cursor, other, ["instant", "id"])).toThrow(/different filters/);
    expect(() => decodeCursor(`${cursor}x`, binding, ["instant", "id"])).toThrow(/malformed/);
    expect(() => decodeCursor("garbage", binding, ["instant", "id"])).toThrow(/malformed/);
  });
});
