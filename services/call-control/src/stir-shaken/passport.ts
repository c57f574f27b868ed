import { randomUUID } from "node:crypto";
import canonicalize from "canonicalize";
import { CompactSign } from "jose";
import type { SigningKeyStore } from "@switchboard/kit";
import { passportPurpose } from "./certificate.js";

export type Attestation = "A" | "B" | "C";

export interface PassportInput {
  attest: Attestation;
  /** E.164 caller id. */
  from: string;
  /** E.164 destination. */
  to: string;
  /** The certificate URL. */
  x5u: string;
}

export interface SignedPassport {
  identity: string;
  origid: string;
}

/** RFC 8225 §8.3: a telephone number in a PASSporT is its digits, without the '+'. */
export const canonicalTn = (e164: string): string => e164.replace(/^\+/, "");

/**
 * SHAKEN PASSporTs (RFC 8225 + RFC 8588): ES256, header `{alg, ppt: "shaken", typ: "passport",
 * x5u}`, claims `attest`, `dest.tn`, `iat`, `orig.tn`, `origid`. Header and claims are
 * serialised in lexicographic key order without whitespace (RFC 8225 §9), so the JWS can be
 * rebuilt from the claims (the compact form a SIP Identity header carries).
 */
export class PassportSigner {
  constructor(private readonly keys: SigningKeyStore) {}

  async sign(input: PassportInput): Promise<SignedPassport> {
    const key = await this.keys.activeKey(passportPurpose);
    const origid = randomUUID();
    const claims = {
      attest: input.attest,
      dest: { tn: [canonicalTn(input.to)] },
      iat: Math.floor(Date.now() / 1000),
      orig: { tn: canonicalTn(input.from) },
      origid,
    };
    const payload = canonicalize(claims);
    if (payload === undefined) throw new Error("the PASSporT claims did not serialise");
    const identity = await new CompactSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: "ES256", ppt: "shaken", typ: "passport", x5u: input.x5u })
      .sign(key.privateKey);
    return { identity, origid };
  }
}
