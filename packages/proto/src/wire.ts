import {
  Attestation,
  CallDirection,
  CallStatus,
  HangupCause,
  HangupSource,
  SeatStatus,
} from "./gen/switchboard/callcontrol/v1/callcontrol.js";
import {
  Capability,
  HoldStatus,
  NumberStatus,
  NumberType,
} from "./gen/switchboard/inventory/v1/inventory.js";
import {
  Channel,
  ConsentSource,
  ConsentStatus,
  Encoding,
  MessageDirection,
  MessageStatus,
  RevocationSource,
  TemplateStatus,
} from "./gen/switchboard/messaging/v1/messaging.js";
import { KeyStatus, UsageKind, UsageUnit } from "./gen/switchboard/usage/v1/usage.js";
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
export const seatStatus = wireEnum(SeatStatus);
export const attestation = wireEnum(Attestation, { spellings: { A: "A", B: "B", C: "C" } });
export const usageKind = wireEnum(UsageKind, { dots: true });
export const usageUnit = wireEnum(UsageUnit);
export const keyStatus = wireEnum(KeyStatus);
export const numberType = wireEnum(NumberType);
export const capability = wireEnum(Capability);
export const numberStatus = wireEnum(NumberStatus);
export const holdStatus = wireEnum(HoldStatus);
export const messageDirection = wireEnum(MessageDirection);
export const channel = wireEnum(Channel);
export const messageStatus = wireEnum(MessageStatus);
export const encoding = wireEnum(Encoding, { spellings: { GSM_7: "GSM-7", UCS_2: "UCS-2" } });
export const templateStatus = wireEnum(TemplateStatus);
export const consentSource = wireEnum(ConsentSource);
export const consentStatus = wireEnum(ConsentStatus);
export const revocationSource = wireEnum(RevocationSource);
export const subscriptionStatus = wireEnum(SubscriptionStatus);
export const disabledReason = wireEnum(DisabledReason);
export const deliveryStatus = wireEnum(DeliveryStatus);
export const attemptOutcome = wireEnum(AttemptOutcome);

export type CallDirectionValue = (typeof callDirection.values)[number];
export type CallStatusValue = (typeof callStatus.values)[number];
export type HangupCauseValue = (typeof hangupCause.values)[number];
export type HangupSourceValue = (typeof hangupSource.values)[number];
export type SeatStatusValue = (typeof seatStatus.values)[number];
export type AttestationValue = (typeof attestation.values)[number];
export type UsageKindValue = (typeof usageKind.values)[number];
export type UsageUnitValue = (typeof usageUnit.values)[number];
export type KeyStatusValue = (typeof keyStatus.values)[number];
export type NumberTypeValue = (typeof numberType.values)[number];
export type CapabilityValue = (typeof capability.values)[number];
export type NumberStatusValue = (typeof numberStatus.values)[number];
export type HoldStatusValue = (typeof holdStatus.values)[number];
export type MessageDirectionValue = (typeof messageDirection.values)[number];
export type ChannelValue = (typeof channel.values)[number];
export type MessageStatusValue = (typeof messageStatus.values)[number];
export type EncodingValue = (typeof encoding.values)[number];
export type TemplateStatusValue = (typeof templateStatus.values)[number];
export type ConsentSourceValue = (typeof consentSource.values)[number];
export type ConsentStatusValue = (typeof consentStatus.values)[number];
export type RevocationSourceValue = (typeof revocationSource.values)[number];
export type SubscriptionStatusValue = (typeof subscriptionStatus.values)[number];
export type DisabledReasonValue = (typeof disabledReason.values)[number];
export type DeliveryStatusValue = (typeof deliveryStatus.values)[number];
export type AttemptOutcomeValue = (typeof attemptOutcome.values)[number];
