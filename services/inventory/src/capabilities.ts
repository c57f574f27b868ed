/** Number capabilities, stored as a bitmask so "all of these" is `(capabilities & m) = m`. */
export const capabilityNames = ["voice", "sms", "mms", "rcs"] as const;
export type Capability = (typeof capabilityNames)[number];

export const isCapability = (value: string): value is Capability =>
  (capabilityNames as readonly string[]).includes(value);

export const capabilityMask = (names: readonly Capability[]): number =>
  names.reduce((mask, name) => mask | (1 << capabilityNames.indexOf(name)), 0);

export const capabilitiesOf = (mask: number): Capability[] =>
  capabilityNames.filter((_, bit) => (mask & (1 << bit)) !== 0);
