import {
  checkE164,
  DomainError,
  newId,
  requireAccount,
  runOnce,
  validationFailed,
} from "@switchboard/kit";
import { outboundCallLimits, type callcontrol } from "@switchboard/proto";
import type { NumberDirectory } from "../inventory-directory.js";
import { findAgentByName } from "../resources/agents.js";
import { findRoute, findRouteByNumber } from "../resources/route-rows.js";
import { findSeat } from "../resources/seats.js";
import type { Tx } from "../scheduler/tx.js";
import { checkAgentName } from "../validation.js";
import { emitCallEvent } from "./call-events.js";
import type { CallEngine } from "./call-engine.js";
import { findCall } from "./call-queries.js";
import { callColumns, keyedCallChange, type CallRow } from "./call-rows.js";
import { claimSeat } from "./seat-claims.js";
import { afterAnswer, callTimerKinds } from "./transitions.js";

/** The `from` of an inbound call whose caller withholds the number (docs/api.md "Calls"). */
export const anonymousCaller = "anonymous";

export interface InboundDeps {
  engine: CallEngine;
  directory: NumberDirectory;
  ringTimeoutSeconds: number;
}

/**
 * The network delivers a call to one of the account's numbers: it rings under the number's
 * route (`call.incoming`, with a ring timeout), or, with no route, the platform rejects it at
 * once (`rejected`, `no_route`, SIP 404; `call.completed`). The sandbox endpoint calls this; a
 * trunk adapter would, for an INVITE to a DID, once it has resolved the DID's account.
 */
export async function receiveInboundCall(
  deps: InboundDeps,
  delivery: {
    accountId: string;
    /** E.164, or "anonymous" (a caller who withholds the number). */
    from: string;
    to: string;
    /** The trunk's P-Asserted-Identity (kept for the platform, never shown to the account). */
    assertedIdentity?: string | undefined;
  },
  /** Runs in the transaction that makes the call ring (a trunk adapter records its leg). */
  onRinging?: (tx: Tx, call: CallRow) => Promise<void>,
): Promise<CallRow> {
  const errors = requireAccount(delivery.accountId);
  if (delivery.from !== anonymousCaller) checkE164(errors, "#/from", delivery.from);
  checkE164(errors, "#/to", delivery.to);
  errors.throwIfAny();
  if (!(await deps.directory.owned(delivery.accountId, delivery.to))) {
    throw validationFailed([
      { pointer: "#/to", detail: "is not a number assigned to this account" },
    ]);
  }
  return deps.engine.transaction(async (tx) => {
    const route = await findRouteByNumber(tx.client, delivery.accountId, delivery.to);
    const id = newId("call");
    const { rows } = await tx.client.query<CallRow>(
      `INSERT INTO call_control.calls AS c
         (id, account_id, direction, status, to_number, from_number, agent, seat_id, route_id,
          timeout_seconds, time_limit_seconds, ringing_at,
          hangup_cause, hangup_source, sip_code, ended_at, asserted_identity)
       VALUES ($1, $2, 'inbound', $3, $4, $5, $6, $7, $8, $9, $10, now(),
               $11, $12, $13, CASE WHEN $3 = 'rejected' THEN now() END, $14)
       RETURNING ${callColumns}`,
      [
        id,
        delivery.accountId,
        route ? "ringing" : "rejected",
        delivery.to,
        delivery.from,
        route?.agent ?? null,
        route?.seat_id ?? null,
        route?.id ?? null,
        deps.ringTimeoutSeconds,
        outboundCallLimits.timeLimitSeconds.default,
        route ? null : "no_route",
        route ? null : "platform",
        route ? null : 404,
        delivery.assertedIdentity ?? null,
      ],
    );
    const row = rows[0]!;
    if (!route) {
      await emitCallEvent(tx, "call.completed", row);
      return row;
    }
    await onRinging?.(tx, row);
    await emitCallEvent(tx, "call.incoming", row);
    await tx.schedule({
      callId: id,
      kind: callTimerKinds.timeout,
      delayMs: deps.ringTimeoutSeconds * 1000,
      payload: { cause: "timeout", source: "platform", sipCode: 480 },
    });
    return row;
  });
}

/**
 * AnswerInboundCall: a ringing inbound call is answered under its route, by `agent` or the
 * route's agent, on the route's seat (which must have room: seat-busy). Of concurrent answers
 * one wins; the others find the call no longer ringing (409 invalid-state). Under an
 * Idempotency-Key the retry of the answer that won gets that call (kit runOnce).
 */
export async function answerInboundCall(
  engine: CallEngine,
  request: callcontrol.AnswerInboundCallRequest,
  idempotencyKey?: string,
): Promise<CallRow> {
  const errors = requireAccount(request.accountId);
  if (request.routeId !== undefined && !/^rte_[0-9a-z]{26}$/.test(request.routeId)) {
    errors.add("#/route_id", "must be a route id (rte_…)");
  }
  if (request.agent !== undefined) checkAgentName(errors, "#/agent", request.agent);
  if (!/^call_[0-9a-z]{26}$/.test(request.callId))
    errors.add("#/call_id", "must be a call id (call_…)");
  errors.throwIfAny();
  const once = keyedCallChange("answer-inbound-call", request, idempotencyKey);
  return engine.transaction((tx) =>
    runOnce(tx.client, once, async () => {
      const call = await findCall(tx.client, request.accountId, request.callId, { lock: true });
      if (call.direction !== "inbound" || call.status !== "ringing") {
        throw new DomainError(
          "invalid-state",
          `only a ringing inbound call can be answered; this one is ${call.direction} and ${call.status}`,
          {
            extensions: { status: call.status },
          },
        );
      }
      if (request.routeId !== undefined && request.routeId !== call.route_id) {
        throw new DomainError(
          "invalid-state",
          `the call rings under the route ${call.route_id}, not ${request.routeId}`,
        );
      }
      const route = call.route_id
        ? await findRoute(tx.client, request.accountId, call.route_id)
        : undefined;
      const agent = await answeringAgent(tx, request, route?.agent ?? call.agent);
      const seatId = route ? route.seat_id : call.seat_id;
      const seat = seatId ? await findSeat(tx.client, request.accountId, seatId) : undefined;
      if (seat) await claimSeat(tx, request.accountId, seat.id, { pointer: "#/route_id" });
      const { rows } = await tx.client.query<CallRow>(
        `UPDATE call_control.calls c
          SET status = 'in_progress', answered_at = now(), agent = $2, seat_id = $3, seat_claimed = $4
        WHERE c.id = $1 AND c.status = 'ringing'
       RETURNING ${callColumns}`,
        [call.id, agent, seat?.id ?? null, seat !== undefined],
      );
      const row = rows[0];
      if (!row) throw new DomainError("invalid-state", "the call is no longer ringing");
      await afterAnswer(tx, row);
      await emitCallEvent(tx, "call.answered", row);
      await engine.carrier.answer(tx, { callId: row.id, accountId: row.account_id });
      return row;
    }),
  );
}

async function answeringAgent(
  tx: Tx,
  request: callcontrol.AnswerInboundCallRequest,
  routeAgent: string | null,
): Promise<string> {
  if (request.agent !== undefined) {
    const agent = await findAgentByName(tx.client, request.accountId, request.agent);
    if (!agent)
      throw validationFailed([
        { pointer: "#/agent", detail: `no agent of this account is named ${request.agent}` },
      ]);
    return agent.name;
  }
  if (!routeAgent)
    throw new DomainError("invalid-state", "the call has no agent to answer it; name one");
  return routeAgent;
}
