import canonicalize from "canonicalize";
import { flattenedVerify, type JWTVerifyGetKey } from "jose";

/**
 * Verifies a signed record the way docs/api.md tells clients to: the detached compact JWS in
 * `signature` (EdDSA, `kid` in its header) over the RFC 8785 canonical JSON of the record
 * without `signature`, with the key the JWKS names. Resolves false instead of throwing.
 */
export async function verifySignedRecord(
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
      // A local JWKS resolves any JWS header; jose types it for JWTs only.
      keys as Parameters<typeof flattenedVerify>[1],
      { algorithms: ["EdDSA"] },
    );
    return true;
  } catch {
    return false;
  }
}
