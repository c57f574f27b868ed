import { wire } from "@switchboard/proto";

/**
 * Number capabilities, stored as a bitmask so "all of these" is `(capabilities & m) = m`. A
 * capability's bit is its place in the proto enum (voice 0, sms 1, mms 2, rcs 3): stored masks
 * depend on that order, so new capabilities go at the end.
 */
export const capabilityNames = wire.capability.values;
export type Capability = wire.CapabilityValue;

export const isCapability = wire.capability.is;

export const capabilityMask = (names: readonly Capability[]): number =>
  names.reduce((mask, name) => mask | (1 << capabilityNames.indexOf(name)), 0);

export const capabilitiesOf = (mask: number): Capability[] =>
  capabilityNames.filter((_, bit) => (mask & (1 << bit)) !== 0);
