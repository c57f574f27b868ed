import {
  CallDirection,
  CallStatus,
  HangupCause,
  HangupSource,
} from "./gen/switchboard/callcontrol/v1/callcontrol.js";
import {
  Capability,
  HoldStatus,
  NumberStatus,
  NumberType,
} from "./gen/switchboard/inventory/v1/inventory.js";
import { UsageKind } from "./gen/switchboard/usage/v1/usage.js";
import {
  AttemptOutcome,
  DeliveryStatus,
  DisabledReason,
  SubscriptionStatus,
} from "./gen/switchboard/webhook/v1/webhook.js";
import { wireEnum } from "./wire-enum.js";

/** The closed value sets of the contracts, as the API spells them (wire-enum.ts). */
export const callDirection = wireEnum(CallDirection);
export const callStatus = wireEnum(CallStatus);
export const hangupCause = wireEnum(HangupCause);
export const hangupSource = wireEnum(HangupSource);
export const usageKind = wireEnum(UsageKind, { dots: true });
export const numberType = wireEnum(NumberType);
export const capability = wireEnum(Capability);
export const numberStatus = wireEnum(NumberStatus);
export const holdStatus = wireEnum(HoldStatus);
export const subscriptionStatus = wireEnum(SubscriptionStatus);
export const disabledReason = wireEnum(DisabledReason);
export const deliveryStatus = wireEnum(DeliveryStatus);
export const attemptOutcome = wireEnum(AttemptOutcome);

export type CallDirectionValue = (typeof callDirection.values)[number];
export type CallStatusValue = (typeof callStatus.values)[number];
export type HangupCauseValue = (typeof hangupCause.values)[number];
export type HangupSourceValue = (typeof hangupSource.values)[number];
export type UsageKindValue = (typeof usageKind.values)[number];
export type NumberTypeValue = (typeof numberType.values)[number];
export type CapabilityValue = (typeof capability.values)[number];
export type NumberStatusValue = (typeof numberStatus.values)[number];
export type HoldStatusValue = (typeof holdStatus.values)[number];
export type SubscriptionStatusValue = (typeof subscriptionStatus.values)[number];
export type DisabledReasonValue = (typeof disabledReason.values)[number];
export type DeliveryStatusValue = (typeof deliveryStatus.values)[number];
export type AttemptOutcomeValue = (typeof attemptOutcome.values)[number];
