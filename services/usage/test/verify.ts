import canonicalize from "canonicalize";
import { flattenedVerify, type JWTVerifyGetKey } from "jose";

/**
 * Verifies a usage record the way API.md tells clients to: the detached compact JWS in
 * `signature` over the RFC 8785 canonical JSON of the record without `signature`, with the key
 * named by its `kid` from the JWKS. Resolves false instead of throwing on a bad signature.
 */
export async function verifyRecord(
  record: Record<string, unknown>,
  keys: JWTVerifyGetKey | Parameters<typeof flattenedVerify>[1],
): Promise<boolean> {
  const { signature, ...unsigned } = record;
  if (typeof signature !== "string") return false;
  const [protectedHeader, payload, sig] = signature.split(".");
  if (payload !== "" || !protectedHeader || !sig) return false;
  try {
    await flattenedVerify(
      {
        protected: protectedHeader,
        payload: Buffer.from(canonicalize(unsigned) ?? "", "utf8").toString("base64url"),
        signature: sig,
      },
      keys as Parameters<typeof flattenedVerify>[1],
      { algorithms: ["EdDSA"] },
    );
    return true;
  } catch {
    return false;
  }
}
