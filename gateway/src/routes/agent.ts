import { smokeRun } from "../schemas/agent.js";
import type { Smoke } from "@switchboard/agent-smoke";
import { ok } from "./replies.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";

const smokeDescription = [
  "Runs an end-to-end check of the platform inside the caller's account: every step drives a service through the same gRPC calls the public routes make, with sandbox numbers, and reports `{name, status: pass|fail|skipped, duration_ms, detail}`. The reply is 200 whatever the outcome; `status` is `fail` when any step failed, and a backend that is down fails its own steps (detail `service-unavailable: …` or `upstream-timeout: …`) while the steps that need them are `skipped`.",
  "Steps, in this order: `gateway` (the gateway's own database and Redis are ready and replies land api.request records); `numbers.search` → `numbers.hold` (60 s) → `numbers.release`; `resources` (see below); `calls.outbound` (a STIR/SHAKEN-signed call from the smoke number to the sandbox destination +15550109990, until `completed`); `calls.inbound` (the sandbox network calls the smoke number, the call is answered under the smoke route and completes when the caller hangs up); `messages.send` (the template named `smoke`, a consent marked `smoke`, an SMS to the sandbox recipient +15550209990 until `delivered`); `webhooks.delivery` (a subscription marked `smoke` to the platform's internal sink gets a `webhook.test` event; the sink's receipt must verify, with the sink's check and with the subscription's secret, and the delivery must be `delivered`); `usage.records` (the number.held, call.placed, call.completed, message.sent and webhook.delivered records of the steps that passed exist and verify against /.well-known/jwks.json; skipped when none passed); `cleanup`.",
  "Resources are marked `smoke` and reused across runs: the agent named `smoke`, the seat named `smoke`, a voice+sms number assigned to that seat (held and assigned on the first run only, so it stays in the account) and the route named `smoke` from that number to the agent and seat. The `smoke` template and the recipient's `smoke` consent are made once; the call's client_state and the webhook subscription's description carry the run's `smk_` id. `cleanup` releases any hold still active, hangs up any call not seen to end and deletes the run's webhook subscription; it fails, naming what is left, when it cannot.",
  "Time: steps run concurrently where they can; each has SMOKE_STEP_TIMEOUT_MS (the call steps SANDBOX_CALL_SECONDS more) and all of them SMOKE_TIMEOUT_MS (default 30 s) less a cleanup reserve, so the reply comes within about SMOKE_TIMEOUT_MS. Each run lands one signed `smoke.run` usage record (resource_id the `smk_` id, attributes smoke_id, status, duration_ms). A 200 with Idempotency-Key is replayed like any other; without the sandbox carrier the call and message steps are skipped.",
].join("\n\n");

/** The agent smoke (docs/api.md "Agent smoke"). */
export function agentRoutes(smoke: Smoke): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/api/agent/smoke",
      operationId: "runAgentSmoke",
      summary: "Run the end-to-end agent smoke check",
      description: smokeDescription,
      tag: "Agent smoke",
      scope: "agent:smoke",
      success: { status: 200, description: "The run's report", schema: smokeRun },
      problems: [],
      handler: async (ctx) =>
        ok(
          await smoke.run({
            accountId: ctx.principal.accountId,
            principal: ctx.principal.principalId,
            requestId: ctx.requestId,
          }),
        ),
    }),
  ];
}
