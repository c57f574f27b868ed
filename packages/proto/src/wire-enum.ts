/**
 * The REST API, the events and the databases spell a proto enum value in lower case without the
 * enum's prefix: CallStatus.IN_PROGRESS (`CALL_STATUS_IN_PROGRESS` in the proto) is
 * `in_progress`. Dotted enums (usage kinds) put a dot at the first underscore: API_REQUEST is
 * `api.request`. The generated enum (ts-proto, stringEnums and removeEnumPrefix) is the one list.
 */
type Placeholder = "UNSPECIFIED" | "UNRECOGNIZED";
type Member<E> = Exclude<keyof E & string, Placeholder>;
type Dotted<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}.${Tail}` : S;

export type Spelled<E, Dots extends boolean = false> = Dots extends true
  ? Dotted<Lowercase<Member<E>>>
  : Lowercase<Member<E>>;

export interface WireEnum<V extends string, W extends string> {
  /** Every value as the API spells it, in proto order (for zod `enum` and SQL). */
  readonly values: readonly [W, ...W[]];
  readonly is: (value: string) => value is W;
  /** Proto → wire; undefined for UNSPECIFIED and values this build does not know. */
  readonly spell: (value: V) => W | undefined;
  /** Wire → proto. */
  readonly of: (wire: W) => V;
}

export function wireEnum<E extends Record<string, string>, Dots extends boolean = false>(
  generated: E,
  options: { dots?: Dots } = {},
): WireEnum<E[keyof E], Spelled<E, Dots>> {
  type W = Spelled<E, Dots>;
  const spellKey = (key: string) => {
    const lower = key.toLowerCase();
    return (options.dots ? lower.replace("_", ".") : lower) as W;
  };
  const members = Object.keys(generated).filter((k) => k !== "UNSPECIFIED" && k !== "UNRECOGNIZED");
  const toWire = new Map(members.map((k) => [generated[k], spellKey(k)]));
  const toProto = new Map(members.map((k) => [spellKey(k), generated[k] as E[keyof E]]));
  const values = members.map(spellKey) as unknown as readonly [W, ...W[]];
  return {
    values,
    is: (value: string): value is W => toProto.has(value as W),
    spell: (value) => toWire.get(value),
    of: (wire) => {
      const value = toProto.get(wire);
      if (value === undefined) throw new TypeError(`not a value of this enum: ${wire}`);
      return value;
    },
  };
}
