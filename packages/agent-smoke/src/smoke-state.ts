import type { callcontrol, inventory, messaging, webhook, wire } from "@switchboard/proto";
import type { SmokeBackends } from "./ports.js";
import type { StepScope } from "./step-scope.js";

/** The smoke resources kept across runs (found by their `smoke` marker, created when missing). */
export interface SmokeResources {
  agent: string;
  seatId: string;
  /** E.164, assigned to the account and the smoke seat, with voice and sms. */
  number: string;
  routeId: string;
}

/** A usage record a step expects: `kind` about `resourceId` (and, optionally, more). */
export interface ExpectedRecord {
  kind: wire.UsageKindValue;
  resourceId: string;
  /** Attributes the record must carry (e.g. the hold id of a number.held record). */
  attributes?: Record<string, string>;
}

/** Something the smoke made that must not outlive it, and how to undo it. */
export interface PendingUndo {
  label: string;
  undo(scope: StepScope): Promise<void>;
}

/** What the steps of one run share: the caller, what they found or made, what to undo. */
export interface SmokeState {
  smokeId: string;
  accountId: string;
  backends: SmokeBackends;
  candidates: inventory.PhoneNumber[];
  hold?: inventory.Hold;
  resources?: SmokeResources;
  outboundCall?: callcontrol.Call;
  inboundCall?: callcontrol.Call;
  message?: messaging.Message;
  delivery?: webhook.Delivery;
  /** Records each passed step expects in the usage ledger, by step. */
  records: Map<string, ExpectedRecord[]>;
  /** By resource id; cleanup undoes whatever is still here. */
  pending: Map<string, PendingUndo>;
}

export function newSmokeState(options: {
  smokeId: string;
  accountId: string;
  backends: SmokeBackends;
}): SmokeState {
  return { ...options, candidates: [], records: new Map(), pending: new Map() };
}

/** An idempotency key for one of this run's creations (safe to retry, never reused). */
export const runKey = (state: SmokeState, what: string): string => `smoke.${state.smokeId}.${what}`;
