import type { z } from "zod";

/** A seeded PRNG (mulberry32): the same seed draws the same cases. */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * max);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}

export type Random = ReturnType<typeof seededRandom>;

const badStrings = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfff",
  "😀",
  "é".repeat(300),
  "a".repeat(70_000),
  "' OR 1=1 --",
  "%00",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "+15550100001",
  "+1",
  "agt_01jd0000000000000000000000",
  "whs_01jd0000000000000000000000",
  "https://127.0.0.1:5432/",
  "http://[::1]/",
  "sms",
  "*",
  "null",
  "2026-02-30T00:00:00Z",
  "\u202e\u2066",
  "\r\nX-Injected: 1",
];

const badNumbers = [0, -1, 1, 1.5, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, Number.MIN_VALUE, -0];

/** The member names a zod object schema declares (for bodies and queries close to valid). */
export function shapeKeys(schema: z.ZodType | undefined): string[] {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

/** A JSON value of any type, often hostile. */
export function anyValue(random: Random, depth = 0): unknown {
  switch (random.int(depth > 3 ? 4 : 7)) {
    case 0:
      return random.pick(badStrings);
    case 1:
      return random.pick(badNumbers);
    case 2:
      return random.pick([true, false, null]);
    case 3:
      return random.pick(badStrings).slice(0, 40);
    case 4:
      return Array.from({ length: random.int(4) }, () => anyValue(random, depth + 1));
    case 5:
      return objectOf(random, [], depth + 1);
    default:
      return [anyValue(random, depth + 1)];
  }
}

function objectOf(random: Random, keys: string[], depth: number): Record<string, unknown> {
  const names = [...keys.filter(() => random.chance(0.7))];
  if (random.chance(0.3)) names.push(random.pick(badStrings).slice(0, 30));
  return Object.fromEntries(names.map((name) => [name, anyValue(random, depth)]));
}

/** A request body: usually an object near the schema's shape, sometimes raw junk. */
export function fuzzBody(
  random: Random,
  keys: string[],
): { text: string; contentType: string | undefined } {
  const json = "application/json";
  switch (random.int(10)) {
    case 0:
      return {
        text: random.pick(['{"a":', "{", "[1,2", "nul", "\u0000", "{}}", '{"a":1,}']),
        contentType: json,
      };
    case 1:
      return {
        text: JSON.stringify(objectOf(random, keys, 0)),
        contentType: random.pick([
          "text/plain",
          "application/xml",
          "multipart/form-data; boundary=x",
          undefined,
        ]) as string | undefined,
      };
    case 2:
      return { text: `${"[".repeat(5_000)}${"]".repeat(5_000)}`, contentType: json };
    case 3:
      return { text: JSON.stringify(anyValue(random)), contentType: json };
    case 4:
      return { text: "", contentType: json };
    case 5:
      return { text: `{"a":"${"x".repeat(70_000)}"}`, contentType: json };
    default:
      return { text: JSON.stringify(objectOf(random, keys, 0)), contentType: json };
  }
}

/** A query string built from the schema's parameter names and hostile values. */
export function fuzzQuery(random: Random, keys: string[]): string {
  const names = [...keys.filter(() => random.chance(0.5))];
  if (random.chance(0.3)) names.push(random.pick(["zzz", "limit", "cursor", "%00", "a[b]"]));
  const values = [
    "%00",
    "%ED%A0%80",
    "%ff",
    "-1",
    "0",
    "99999999999999999999",
    "1e3",
    "abc",
    "",
    encodeURIComponent("a".repeat(3000)),
    "eyJhIjoxfQ.AAAA",
    "voice,sms,,",
    "%E0%A4%A",
  ];
  const parts = names.map((name) => `${name}=${random.pick(values)}`);
  if (random.chance(0.2) && names[0]) parts.push(`${names[0]}=${random.pick(values)}`);
  return parts.length > 0 ? `?${parts.join("&")}` : "";
}

/** A path parameter value (already percent-encoded where it needs to be). */
export function fuzzPathValue(random: Random): string {
  return random.pick([
    "%00",
    "%E0%A4%A",
    "%ff",
    "%ED%A0%80",
    "x",
    "agt_01jd0000000000000000000000",
    "num_01jd0000000000000000000000",
    "hold_01jd0000000000000000000000",
    "call_01jd0000000000000000000000",
    "a".repeat(3000),
    "%2e%2e%2f",
    encodeURIComponent("é😀"),
    "1",
    "validation-failed",
  ]);
}

/** Request headers, sometimes hostile. */
export function fuzzHeaders(random: Random, token: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (token && random.chance(0.85)) headers.Authorization = `Bearer ${token}`;
  else if (random.chance(0.3)) {
    headers.Authorization = random.pick([
      "Bearer",
      "Bearer x.y.z",
      "Basic Og==",
      "Basic !!!",
      `Bearer ${"a".repeat(5000)}`,
      "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
    ]);
  }
  if (random.chance(0.3)) {
    headers["Idempotency-Key"] = random.pick([
      "k-1",
      "",
      "a".repeat(300),
      "bad key",
      '"quoted-key"',
      "é",
      `fuzz-${random.int(5)}`,
    ]);
  }
  if (random.chance(0.1)) headers.Accept = random.pick(["text/html", "*/*", "application/xml"]);
  return headers;
}
