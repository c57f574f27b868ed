/**
 * The REST API, the events and the databases spell a proto enum value in lower case without the
 * enum's prefix: CallStatus.IN_PROGRESS (`CALL_STATUS_IN_PROGRESS` in the proto) is
 * `in_progress`. Dotted enums (usage kinds) put a dot at the first underscore: API_REQUEST is
 * `api.request`. A set the rule cannot spell (`GSM-7`, `A`) names each spelling. The generated
 * enum (ts-proto, stringEnums and removeEnumPrefix) is the one list.
 */
type Placeholder = "UNSPECIFIED" | "UNRECOGNIZED";
type Member<E> = Exclude<keyof E & string, Placeholder>;
type Dotted<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}.${Tail}` : S;

/** Every member of the enum with its API spelling. */
export type Spellings<E> = { readonly [K in Member<E>]: string };

export interface WireEnumOptions<E> {
  /** Put a dot at the first underscore (`api.request`). */
  readonly dots?: boolean;
  /** Spell each member so (`GSM-7`), instead of the lower-casing rule. */
  readonly spellings?: Spellings<E>;
}

/** The API spelling of E's members under options O. */
export type Spelled<E, O> = O extends { spellings: infer S extends Spellings<E> }
  ? S[Member<E>]
  : O extends { dots: true }
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

export function wireEnum<
  E extends Record<string, string>,
  const O extends WireEnumOptions<E> = Record<never, never>,
>(generated: E, options?: O): WireEnum<E[keyof E], Spelled<E, O>> {
  type W = Spelled<E, O>;
  const spellKey = (key: string): W => {
    const spelling = options?.spellings?.[key as Member<E>];
    if (spelling !== undefined) return spelling as W;
    const lower = key.toLowerCase();
    return (options?.dots ? lower.replace("_", ".") : lower) as W;
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
