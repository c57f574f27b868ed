import { DomainError } from "@switchboard/kit";
import { callcontrol, wire } from "@switchboard/proto";
import { runKey, type SmokeResources, type SmokeState } from "./smoke-state.js";
import { StepFailure, StepSkipped, type StepScope } from "./step-scope.js";
import type { StepSpec } from "./step-runner.js";

/** Sandbox network (docs/api.md "Carriers: the real networks and the sandbox"): `+1555010xxx0` answers, then completes. */
export const sandboxAnsweringNumber = "+15550109990";
/** The simulated caller of the inbound call (any E.164 number). */
export const sandboxCaller = "+15550109991";

export interface CallStepOptions {
  budgetMs: number;
  /** The sandbox carrier is active (the smoke dials sandbox numbers only). */
  sandbox: boolean;
  /** SANDBOX_CALL_SECONDS: how long an answered sandbox call lasts. */
  callSeconds: number;
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
  if (!options.sandbox) throw new StepSkipped("the sandbox carrier is not active");
  return state.resources!;
}

/** calls.outbound (a signed call to a sandbox number, until completed) and calls.inbound. */
export function callSteps(state: SmokeState, options: CallStepOptions): StepSpec[] {
  const cc = state.backends.callControl;
  const budgetMs = options.budgetMs + Math.ceil(options.callSeconds * 1000);
  return [
    {
      name: "calls.outbound",
      needs: ["resources"],
      budgetMs,
      run: async (scope) => {
        const r = resourcesOf(state, options);
        const placed = await scope.rpc(
          cc,
          (c) => c.createOutboundCall,
          {
            accountId: state.accountId,
            to: sandboxAnsweringNumber,
            from: r.number,
            agent: r.agent,
            seatId: r.seatId,
            timeLimitSeconds: Math.max(60, Math.ceil(options.callSeconds) + 30),
            clientState: JSON.stringify({ smoke: state.smokeId }),
          },
          runKey(state, "outbound"),
        );
        const call = track(state, placed.call);
        state.outboundCall = call;
        if (!call.stirShaken?.identity) throw new StepFailure(`${call.id} carries no PASSporT`);
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
