import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AuthHeader } from "sip";
import { quote, unquote } from "./message.js";

/**
 * HTTP Digest as SIP uses it (RFC 3261 §22.4, RFC 2617, RFC 7616, RFC 8760): the algorithms
 * MD5 and SHA-256, qop "auth" only.
 */
export const digestAlgorithms = ["SHA-256", "MD5"] as const;
export type DigestAlgorithm = (typeof digestAlgorithms)[number];

const nodeHash: Record<DigestAlgorithm, string> = { "SHA-256": "sha256", MD5: "md5" };

/** H(data) in lower-case hex (RFC 7616 §3.4.1). */
export const digestHash = (algorithm: DigestAlgorithm, data: string): string =>
  createHash(nodeHash[algorithm]).update(data, "utf8").digest("hex");

/** H(A1) = H(username:realm:password), the one thing a server keeps per algorithm. */
export const digestHa1 = (
  algorithm: DigestAlgorithm,
  username: string,
  realm: string,
  password: string,
): string => digestHash(algorithm, `${username}:${realm}:${password}`);

export interface DigestResponseInput {
  algorithm: DigestAlgorithm;
  ha1: string;
  nonce: string;
  method: string;
  uri: string;
  /** "auth", or undefined for RFC 2069 compatibility (no nc, no cnonce). */
  qop?: string | undefined;
  nc?: string | undefined;
  cnonce?: string | undefined;
}

/** The request-digest (RFC 7616 §3.4.1, RFC 2617 §3.2.2.1). */
export function digestResponse(input: DigestResponseInput): string {
  const ha2 = digestHash(input.algorithm, `${input.method}:${input.uri}`);
  const middle = input.qop ? `${input.nc}:${input.cnonce}:${input.qop}` : undefined;
  return digestHash(
    input.algorithm,
    middle ? `${input.ha1}:${input.nonce}:${middle}:${ha2}` : `${input.ha1}:${input.nonce}:${ha2}`,
  );
}

/** The Digest credentials of an Authorization header, unquoted. */
export interface DigestCredentials {
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  response: string;
  /** As written; absent means MD5 (RFC 2617 §3.2.1). */
  algorithm: string;
  qop: string | undefined;
  nc: string | undefined;
  cnonce: string | undefined;
  opaque: string | undefined;
}

/** The header's Digest credentials, or undefined when it is another scheme or lacks a part. */
export function parseCredentials(header: AuthHeader): DigestCredentials | undefined {
  if (header.scheme.toLowerCase() !== "digest") return undefined;
  const field = (name: string) => {
    const key = Object.keys(header).find((k) => k.toLowerCase() === name);
    return key === undefined ? undefined : unquote(header[key]);
  };
  const username = field("username");
  const realm = field("realm");
  const nonce = field("nonce");
  const uri = field("uri");
  const response = field("response");
  if (!username || realm === undefined || !nonce || !uri || !response) return undefined;
  return {
    username,
    realm,
    nonce,
    uri,
    response,
    algorithm: field("algorithm") ?? "MD5",
    qop: field("qop"),
    nc: field("nc"),
    cnonce: field("cnonce"),
    opaque: field("opaque"),
  };
}

/** The algorithm named by a challenge or credentials (case-insensitive), if we offer it. */
export const digestAlgorithm = (name: string): DigestAlgorithm | undefined =>
  digestAlgorithms.find((algorithm) => algorithm.toLowerCase() === name.toLowerCase());

/** A WWW-Authenticate challenge (RFC 7616 §3.3) for one algorithm, qop "auth". */
export function digestChallenge(input: {
  realm: string;
  nonce: string;
  algorithm: DigestAlgorithm;
  stale?: boolean;
}): AuthHeader {
  return {
    scheme: "Digest",
    realm: quote(input.realm),
    nonce: quote(input.nonce),
    algorithm: input.algorithm,
    qop: '"auth"',
    ...(input.stale ? { stale: "true" } : {}),
  };
}

/** Two hex digests compared in constant time (a different length is simply unequal). */
export function sameDigest(expected: string, given: string): boolean {
  const a = Buffer.from(expected.toLowerCase(), "utf8");
  const b = Buffer.from(given.toLowerCase(), "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The client side: credentials answering one of `challenges` (a 401's WWW-Authenticate or a
 * 407's Proxy-Authenticate), the strongest algorithm offered that we know, qop "auth" when
 * offered. Undefined when no challenge is one we can answer.
 */
export function answerChallenge(
  challenges: AuthHeader[],
  input: { username: string; password: string; method: string; uri: string },
): AuthHeader | undefined {
  const field = (header: AuthHeader, name: string) => {
    const key = Object.keys(header).find((k) => k.toLowerCase() === name);
    return key === undefined ? undefined : unquote(header[key]);
  };
  const usable = challenges
    .filter((c) => c.scheme.toLowerCase() === "digest")
    .map((c) => ({ c, algorithm: digestAlgorithm(field(c, "algorithm") ?? "MD5") }))
    .filter((u): u is { c: AuthHeader; algorithm: DigestAlgorithm } => u.algorithm !== undefined)
    .sort((a, b) => digestAlgorithms.indexOf(a.algorithm) - digestAlgorithms.indexOf(b.algorithm));
  const chosen = usable[0];
  if (!chosen) return undefined;
  const realm = field(chosen.c, "realm");
  const nonce = field(chosen.c, "nonce");
  if (realm === undefined || !nonce) return undefined;
  const qops = (field(chosen.c, "qop") ?? "").split(",").map((q) => q.trim().toLowerCase());
  const qop = qops.includes("auth") ? "auth" : undefined;
  const nc = "00000001";
  const cnonce = randomBytes(8).toString("hex");
  const opaque = field(chosen.c, "opaque");
  const response = digestResponse({
    algorithm: chosen.algorithm,
    ha1: digestHa1(chosen.algorithm, input.username, realm, input.password),
    nonce,
    method: input.method,
    uri: input.uri,
    qop,
    nc,
    cnonce,
  });
  return {
    scheme: "Digest",
    username: quote(input.username),
    realm: quote(realm),
    nonce: quote(nonce),
    uri: quote(input.uri),
    response: quote(response),
    algorithm: chosen.algorithm,
    ...(qop ? { qop, nc, cnonce: quote(cnonce) } : {}),
    ...(opaque !== undefined ? { opaque: quote(opaque) } : {}),
  };
}
