import { DomainError } from "@switchboard/kit";
import { callcontrol, wire } from "@switchboard/proto";
import { smokeMarker } from "./smoke-resources.js";
import { runKey, type SmokeResources, type SmokeState } from "./smoke-state.js";
import { StepFailure, StepSkipped, type StepScope } from "./step-scope.js";
import type { StepSpec } from "./step-runner.js";

/** Sandbox network (docs/api.md "Carriers: the real networks and the sandbox"): `+1555010xxx0` answers, then completes. */
export const sandboxAnsweringNumber = "+15550109990";
/** The simulated caller of the inbound call (any E.164 number). */
export const sandboxCaller = "+15550109991";

export interface CallStepOptions {
  budgetMs: number;
  /** The voice carrier (undefined: none the gateway knows of). */
  carrier: string | undefined;
  /** SANDBOX_CALL_SECONDS: how long an answered sandbox call lasts. */
  callSeconds: number;
  /** SMOKE_CALL_TO: the number the outbound call goes to on a SIP trunk (it must answer). */
  callTo: string | undefined;
}

const ended = (call: callcontrol.Call | undefined) => call?.endedAt !== undefined;

/** Registers a live call's hangup with the cleanup until it is seen to end. */
function track(state: SmokeState, call: callcontrol.Call | undefined): callcontrol.Call {
  if (!call) throw new StepFailure("call-control answered without a call");
  state.pending.set(call.id, {
    label: `call ${call.id}`,
    undo: async (scope) => {
      try {
        await scope.rpc(state.backends.callControl, (c) => c.hangupCall, {
          accountId: state.accountId,
          callId: call.id,
        });
      } catch (error) {
        // Already ended: nothing to hang up.
        if (!(error instanceof DomainError && error.kind === "invalid-state")) throw error;
      }
    },
  });
  return call;
}

async function waitForEnd(scope: StepScope, state: SmokeState, callId: string, what: string) {
  const { call } = await scope.poll(
    what,
    () =>
      scope.rpc(state.backends.callControl, (c) => c.getCall, {
        accountId: state.accountId,
        callId,
      }),
    (r) => ended(r.call),
  );
  state.pending.delete(callId);
  return call!;
}

const outcome = (call: callcontrol.Call) => {
  const cause = call.hangupCause && wire.hangupCause.spell(call.hangupCause);
  return `${call.id} ended ${wire.callStatus.spell(call.status)}${cause ? ` (${cause})` : ""}`;
};

function resourcesOf(state: SmokeState, options: CallStepOptions): SmokeResources {
  if (options.carrier !== "sandbox") throw new StepSkipped("the sandbox carrier is not active");
  return state.resources!;
}

/**
 * On a SIP trunk the smoke's calls ring its own seat's phone first (third-party call control):
 * the phone must be registered and answer by itself (an operator rotates the seat's SIP
 * credentials and registers a softphone in auto-answer with them).
 */
async function registeredSmokeSeat(scope: StepScope, state: SmokeState) {
  const resources = state.resources!;
  const { seat } = await scope.rpc(state.backends.callControl, (c) => c.getSeat, {
    accountId: state.accountId,
    seatId: resources.seatId,
  });
  if (!seat?.sip?.registered) {
    throw new StepSkipped(
      `no phone is registered as the smoke's seat ${resources.seatId} ("${smokeMarker}"): rotate its SIP credentials (POST /v1/api/seats/${resources.seatId}/sip/rotate-credentials) and register a phone that answers by itself`,
    );
  }
  return resources;
}

/** The outbound call over SIP goes to SMOKE_CALL_TO; it is hung up once answered. */
async function sipCallOf(scope: StepScope, state: SmokeState, options: CallStepOptions) {
  if (!options.callTo) {
    throw new StepSkipped(
      "the sip carrier calls a real network: set SMOKE_CALL_TO to a number the trunk answers",
    );
  }
  return { ...(await registeredSmokeSeat(scope, state)), to: options.callTo };
}

const callBudget = (options: CallStepOptions) => Math.max(60, Math.ceil(options.callSeconds) + 30);

/** Places the smoke's signed call from its seat (one per run: `key` makes it idempotent). */
async function placeCall(
  scope: StepScope,
  state: SmokeState,
  options: CallStepOptions,
  call: { to: string; number: string; agent: string; seatId: string },
  key: string,
) {
  const placed = await scope.rpc(
    state.backends.callControl,
    (c) => c.createOutboundCall,
    {
      accountId: state.accountId,
      to: call.to,
      from: call.number,
      agent: call.agent,
      seatId: call.seatId,
      timeLimitSeconds: callBudget(options),
      clientState: JSON.stringify({ smoke: state.smokeId }),
    },
    runKey(state, key),
  );
  return track(state, placed.call);
}

/**
 * calls.inbound over SIP: the smoke calls its own number through the trunk, and the carrier
 * routes the call back in as an inbound call to that number. The smoke answers it under its
 * route (the seat's phone takes it), hangs up the outbound leg, and expects the inbound call to
 * end completed when the carrier passes the hangup on.
 */
async function sipInboundCall(scope: StepScope, state: SmokeState, options: CallStepOptions) {
  const cc = state.backends.callControl;
  const r = await registeredSmokeSeat(scope, state);
  const outbound = await placeCall(
    scope,
    state,
    options,
    { ...r, to: r.number },
    "inbound-hairpin",
  );
  const placedAt = Date.parse(outbound.createdAt);
  const cameBack = (call: callcontrol.Call) =>
    call.to === r.number && call.from === r.number && Date.parse(call.createdAt) >= placedAt;
  const { calls } = await scope.poll(
    "the call to come back in through the trunk",
    () =>
      scope.rpc(cc, (c) => c.listCalls, {
        accountId: state.accountId,
        direction: callcontrol.CallDirection.INBOUND,
        status: callcontrol.CallStatus.RINGING,
        limit: 20,
        cursor: "",
      }),
    (response) => response.calls.some(cameBack),
  );
  const inbound = track(state, calls.find(cameBack));
  state.inboundCall = inbound;
  const { call: answered } = await scope.rpc(cc, (c) => c.answerInboundCall, {
    accountId: state.accountId,
    callId: inbound.id,
    routeId: r.routeId,
  });
  if (answered?.status !== callcontrol.CallStatus.IN_PROGRESS) {
    throw new StepFailure(`${inbound.id} is not in progress after answer`);
  }
  await waitForAnswer(scope, state, outbound.id);
  await scope.rpc(cc, (c) => c.hangupCall, { accountId: state.accountId, callId: outbound.id });
  const done = await waitForEnd(scope, state, inbound.id, "the inbound call to complete");
  await waitForEnd(scope, state, outbound.id, "the outbound leg to end");
  if (done.status !== callcontrol.CallStatus.COMPLETED) throw new StepFailure(outcome(done));
  state.records.set("calls.inbound", [{ kind: "call.completed", resourceId: inbound.id }]);
  return `${inbound.id} came back through the trunk, answered by ${answered.agent ?? r.agent} and completed`;
}

async function waitForAnswer(scope: StepScope, state: SmokeState, callId: string) {
  const { call } = await scope.poll(
    "the outbound call to be answered",
    () =>
      scope.rpc(state.backends.callControl, (c) => c.getCall, {
        accountId: state.accountId,
        callId,
      }),
    (r) => ended(r.call) || r.call?.status === callcontrol.CallStatus.IN_PROGRESS,
  );
  if (!call || ended(call)) throw new StepFailure(call ? outcome(call) : "the call vanished");
  return call;
}

/** Where the outbound step calls, and from which seat: the sandbox's answering number, or SIP's. */
async function outboundTarget(scope: StepScope, state: SmokeState, options: CallStepOptions) {
  if (options.carrier === "sip") {
    return { ...(await sipCallOf(scope, state, options)), hangUpOnAnswer: true };
  }
  return { ...resourcesOf(state, options), to: sandboxAnsweringNumber, hangUpOnAnswer: false };
}

/**
 * calls.outbound (a signed call until completed: to a sandbox number, or over SIP to
 * SMOKE_CALL_TO, hung up once answered) and calls.inbound (the sandbox network delivers one;
 * over SIP the smoke's call to its own number comes back through the trunk).
 */
export function callSteps(state: SmokeState, options: CallStepOptions): StepSpec[] {
  const cc = state.backends.callControl;
  const budgetMs = options.budgetMs + Math.ceil(options.callSeconds * 1000);
  return [
    {
      name: "calls.outbound",
      needs: ["resources"],
      budgetMs,
      run: async (scope) => {
        const r = await outboundTarget(scope, state, options);
        const call = await placeCall(scope, state, options, r, "outbound");
        state.outboundCall = call;
        if (!call.stirShaken?.identity) throw new StepFailure(`${call.id} carries no PASSporT`);
        if (r.hangUpOnAnswer) {
          await waitForAnswer(scope, state, call.id);
          await scope.rpc(cc, (c) => c.hangupCall, { accountId: state.accountId, callId: call.id });
        }
        const done = await waitForEnd(scope, state, call.id, "the outbound call to complete");
        if (done.status !== callcontrol.CallStatus.COMPLETED) throw new StepFailure(outcome(done));
        state.records.set("calls.outbound", [
          { kind: "call.placed", resourceId: call.id },
          { kind: "call.completed", resourceId: call.id },
        ]);
        return `${call.id} to ${call.to} completed (attestation ${wire.attestation.spell(call.stirShaken.attestation)})`;
      },
    },
    {
      name: "calls.inbound",
      needs: ["resources"],
      budgetMs,
      run: async (scope) => {
        if (options.carrier === "sip") return sipInboundCall(scope, state, options);
        const r = resourcesOf(state, options);
        const delivered = await scope.rpc(cc, (c) => c.deliverSandboxInboundCall, {
          accountId: state.accountId,
          from: sandboxCaller,
          to: r.number,
        });
        const call = track(state, delivered.call);
        state.inboundCall = call;
        if (call.status !== callcontrol.CallStatus.RINGING) throw new StepFailure(outcome(call));
        const { call: answered } = await scope.rpc(cc, (c) => c.answerInboundCall, {
          accountId: state.accountId,
          callId: call.id,
          routeId: r.routeId,
        });
        if (answered?.status !== callcontrol.CallStatus.IN_PROGRESS) {
          throw new StepFailure(
            `${call.id} is ${(answered && wire.callStatus.spell(answered.status)) ?? "unknown"} after answer`,
          );
        }
        const done = await waitForEnd(scope, state, call.id, "the answered call to complete");
        if (done.status !== callcontrol.CallStatus.COMPLETED) throw new StepFailure(outcome(done));
        state.records.set("calls.inbound", [{ kind: "call.completed", resourceId: call.id }]);
        return `${call.id} answered by ${answered.agent ?? r.agent} and completed`;
      },
    },
  ];
}
