import { stirShakenCertificatePath, wire } from "@switchboard/proto";
import {
  answerRequest,
  call as callSchema,
  callsPage,
  callsQuery,
  outboundCallRequest,
  pemCertificate,
  sandboxInboundRequest,
} from "../schemas/calls.js";
import { idParam } from "../schemas/common.js";
import { createdWindowRpc } from "../schemas/created-window.js";
import { story, storyCall, storyInboundCall } from "../schemas/story.js";
import { created, ok, pageReply } from "./replies.js";
import { checkedStatusCallback, statusCallbackDescription } from "./status-callback.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toCall } from "./views/calls.js";

const callPath = idParam("call", "call_id");

export interface CallRouteOptions {
  /** The sandbox carrier is active: its inbound endpoint exists. */
  sandbox: boolean;
}

const placeOutboundCall = defineRoute({
  method: "post",
  path: "/api/calls/outbound",
  operationId: "placeOutboundCall",
  examples: {
    request: {
      to: story.callee,
      from: story.ours,
      agent: story.agent,
      client_state: "order-4711",
      status_callback: { url: story.statusCallbackUrl },
    },
    response: storyCall("queued"),
  },
  summary: "Place a signed outbound call",
  description: [
    "Answers 201 with the call `queued`; the carrier is dialled right after. Every call carries a STIR/SHAKEN PASSporT (RFC 8225/8588, ES256, ppt shaken, x5u = this platform's certificate): attestation A when `from` is assigned to the account and to the call's seat, B when it is assigned to the account only.",
    "`from` must be a number assigned to the account (422 caller-id-not-owned); `agent` must name an agent of the account (422 validation-failed at #/agent); `seat_id` must be a seat of the account (422 at #/seat_id); a disabled seat is 409 invalid-state; a seat at max_concurrent_calls is 409 seat-busy. When `seat_id` is omitted the call takes the seat `from` is assigned to, if that is a seat of the account.",
    "With the sip voice carrier the seat's SIP phone is rung first and the destination when the agent answers (RFC 3725); a call with no seat, or whose seat has no registered phone, ends `failed` with hangup_cause seat_unavailable.",
    "Idempotency-Key: the key is also stored with the call (unique per account, 24 hours), so one key places one call on the network even under concurrent retries or if the gateway's store is lost; reusing it for another request is 409 idempotency-mismatch.",
    statusCallbackDescription("call"),
  ].join("\n\n"),
  tag: "Calls",
  scope: "calls:write",
  body: outboundCallRequest,
  success: {
    status: 201,
    description: "The call, queued",
    schema: callSchema,
    headers: ["Location"],
  },
  problems: [
    "validation-failed",
    "unsafe-webhook-url",
    "caller-id-not-owned",
    "seat-busy",
    "invalid-state",
  ],
  handler: async (ctx) => {
    const b = ctx.body;
    const statusCallback = await checkedStatusCallback(ctx.rpc, b.status_callback, "call");
    const response = await ctx.rpc.callControl((c) => c.createOutboundCall, {
      to: b.to,
      from: b.from,
      agent: b.agent,
      seatId: b.seat_id,
      timeoutSeconds: b.timeout_seconds,
      timeLimitSeconds: b.time_limit_seconds,
      clientState: b.client_state,
      statusCallback,
    });
    const body = toCall(response.call);
    return created(`/v1/api/calls/${body.id}`, body);
  },
});

const listCalls = defineRoute({
  method: "get",
  path: "/api/calls",
  operationId: "listCalls",
  summary: "List calls",
  description:
    "Newest first by created_at (then id), or oldest first with `sort=created_at`; `direction`, `status`, `created_after` and `created_before` filter and combine. Keyset-paginated: a walk through the pages in either order neither skips nor repeats a call; the cursor is bound to the filters and the order (another with an old cursor is 400 invalid-cursor).",
  tag: "Calls",
  scope: "calls:read",
  query: callsQuery,
  examples: {
    query: { direction: "outbound", created_after: "2026-11-24T00:00:00Z", sort: "-created_at" },
  },
  paginated: true,
  success: { status: 200, description: "A page of calls", schema: callsPage },
  problems: ["invalid-cursor", "validation-failed"],
  handler: async (ctx) => {
    const q = ctx.query;
    const r = await ctx.rpc.callControl((c) => c.listCalls, {
      direction: q.direction && wire.callDirection.of(q.direction),
      status: q.status && wire.callStatus.of(q.status),
      ...createdWindowRpc(q),
      limit: q.limit,
      cursor: q.cursor ?? "",
    });
    return pageReply(ctx.req, r.calls.map(toCall), r.nextCursor);
  },
});

const getCall = defineRoute({
  method: "get",
  path: "/api/calls/{call_id}",
  operationId: "getCall",
  summary: "Get a call",
  description: "One call of the account with its status, timestamps and hangup cause.",
  tag: "Calls",
  scope: "calls:read",
  params: callPath,
  success: { status: 200, description: "The call", schema: callSchema },
  problems: ["not-found"],
  handler: async (ctx) => {
    const r = await ctx.rpc.callControl((c) => c.getCall, { callId: ctx.params.call_id });
    return ok(toCall(r.call));
  },
});

const hangupCall = defineRoute({
  method: "post",
  path: "/api/calls/{call_id}/hangup",
  operationId: "hangupCall",
  summary: "Hang up a call",
  description:
    "Outbound: before answer the call is `canceled` (originator_cancel, SIP 487), after answer `completed` (normal_clearing); hangup_source caller. Inbound: a ringing call is `rejected` (call_rejected, SIP 603), an answered one `completed`; hangup_source callee. A call that has ended is 409 invalid-state.",
  tag: "Calls",
  scope: "calls:write",
  params: callPath,
  examples: { response: storyCall("completed") },
  success: { status: 200, description: "The ended call", schema: callSchema },
  problems: ["not-found", "invalid-state"],
  handler: async (ctx) => {
    const r = await ctx.rpc.callControl((c) => c.hangupCall, { callId: ctx.params.call_id });
    return ok(toCall(r.call));
  },
});

const answerInboundCall = defineRoute({
  method: "post",
  path: "/api/calls/inbound/answer",
  operationId: "answerInboundCall",
  summary: "Answer a ringing inbound call",
  description: [
    "Answers under the call's route (a different route_id is 409 invalid-state), by `agent` or the route's agent, on the route's seat (409 seat-busy when it is full). A call that is not a ringing inbound call is 409 invalid-state; of concurrent answers exactly one succeeds.",
    "With the sip voice carrier the call is `in_progress` at once and the seat's SIP phone is then rung with the caller's SDP; the trunk is answered with the phone's. If the phone cannot take the call (no registered phone: `failed` with hangup_cause seat_unavailable; it refuses or does not answer in 32 s) the trunk gets 480 and the call ends in that unanswered status, with answered_at null.",
  ].join("\n\n"),
  tag: "Calls",
  scope: "calls:write",
  body: answerRequest,
  examples: {
    request: { call_id: story.callId, agent: story.agent },
    response: storyInboundCall("in_progress"),
  },
  success: { status: 200, description: "The call, in_progress", schema: callSchema },
  problems: ["not-found", "validation-failed", "invalid-state", "seat-busy"],
  handler: async (ctx) => {
    const r = await ctx.rpc.callControl((c) => c.answerInboundCall, {
      callId: ctx.body.call_id,
      routeId: ctx.body.route_id,
      agent: ctx.body.agent,
    });
    return ok(toCall(r.call));
  },
});

const stirShakenCertificate = defineRoute({
  method: "get",
  path: stirShakenCertificatePath,
  operationId: "getStirShakenCertificate",
  summary: "The STIR/SHAKEN certificate",
  description:
    "The X.509 certificate (PEM, application/pem-certificate-chain) whose ES256 key signs this platform's PASSporTs; the `x5u` of every PASSporT points here. Public.",
  tag: "Calls",
  scope: null,
  success: {
    status: 200,
    description: "PEM certificate",
    schema: pemCertificate,
    mediaType: "application/pem-certificate-chain",
    headers: ["Cache-Control"],
  },
  problems: [],
  handler: async (ctx) => {
    const r = await ctx.rpc.callControl((c) => c.getStirShakenCertificate, {});
    return {
      status: 200,
      body: r.certificatePem,
      mediaType: "application/pem-certificate-chain",
      headers: { "Cache-Control": "public, max-age=300" },
    };
  },
});

const deliverSandboxInboundCall = defineRoute({
  method: "post",
  path: "/api/sandbox/calls/inbound",
  operationId: "deliverSandboxInboundCall",
  summary: "Sandbox: the network delivers an inbound call",
  description:
    "Exists only while the sandbox carrier is active. `to` must be one of the account's numbers (422 at #/to). With a route for `to` the call rings (201, `ringing`, until answered or the ring timeout); without one the platform rejects it (201, `rejected`, hangup_cause no_route). An answered sandbox call lasts SANDBOX_CALL_SECONDS, then the caller hangs up.",
  tag: "Sandbox",
  scope: "calls:write",
  body: sandboxInboundRequest,
  examples: {
    request: { from: story.callee, to: story.ours },
    response: storyInboundCall("ringing"),
  },
  success: {
    status: 201,
    description: "The inbound call",
    schema: callSchema,
    headers: ["Location"],
  },
  problems: ["validation-failed", "not-found"],
  handler: async (ctx) => {
    const r = await ctx.rpc.callControl((c) => c.deliverSandboxInboundCall, {
      from: ctx.body.from,
      to: ctx.body.to,
    });
    const body = toCall(r.call);
    return created(`/v1/api/calls/${body.id}`, body);
  },
});

/** Outbound and inbound calls, the STIR/SHAKEN certificate and the sandbox network. */
export const callRoutes = (options: CallRouteOptions): RouteSpec[] => [
  placeOutboundCall,
  listCalls,
  getCall,
  hangupCall,
  answerInboundCall,
  stirShakenCertificate,
  ...(options.sandbox ? [deliverSandboxInboundCall] : []),
];
