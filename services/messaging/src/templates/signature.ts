import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { CompactSign, compactVerify, decodeProtectedHeader } from "jose";
import { DomainError, type SigningKeyStore } from "@switchboard/kit";

/** The signing purpose of template keys (their public keys are in the gateway's JWKS). */
export const TEMPLATE_KEY_PURPOSE = "template";

/** What a template signature covers. */
export interface TemplateContent {
  name: string;
  version: number;
  channels: string[];
  body: string;
}

/** RFC 8785 canonical JSON of the content: the exact bytes that are hashed and signed. */
export function canonicalContent(content: TemplateContent): string {
  const { name, version, channels, body } = content;
  const text = canonicalize({ name, version, channels, body });
  if (text === undefined) throw new Error("template content is not canonicalisable");
  return text;
}

export const sha256Hex = (text: string): string =>
  createHash("sha256").update(text, "utf8").digest("hex");

export interface TemplateSignature {
  contentSha256: string;
  /** Compact JWS, header `{alg: "EdDSA", kid, typ: "template+jws"}`, payload = canonical content. */
  signature: string;
  kid: string;
}

/** A stored version as the database has it now. */
export interface StoredTemplateVersion extends TemplateContent {
  templateId: string;
  contentSha256: string;
  signature: string;
  kid: string;
}

/** The hash of everything a verification checked. */
const memoOf = (stored: StoredTemplateVersion, canonical: string): string =>
  sha256Hex(JSON.stringify([canonical, stored.contentSha256, stored.signature, stored.kid]));

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Signs template versions when they are approved and re-verifies them before every send. A
 * version verifies only if the content now in its row is byte-for-byte (canonically) what was
 * signed: its hash matches content_sha256, the JWS verifies with a published template key, the
 * JWS payload is that content and the header's kid is the row's. Successful verifications are
 * remembered by the hash of everything checked, so an unchanged row costs one hash per send;
 * any change to the row changes that hash and is verified afresh.
 */
export class TemplateSigner {
  private readonly verified = new Map<string, true>();

  constructor(
    private readonly keys: SigningKeyStore,
    private readonly cacheSize = 10_000,
  ) {}

  async sign(content: TemplateContent): Promise<TemplateSignature> {
    const canonical = canonicalContent(content);
    const key = await this.keys.activeKey(TEMPLATE_KEY_PURPOSE);
    const signature = await new CompactSign(encoder.encode(canonical))
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "template+jws" })
      .sign(key.privateKey);
    return { contentSha256: sha256Hex(canonical), signature, kid: key.kid };
  }

  /** Whether this exact stored version verified before (no key lookup, no wait). */
  remembers(stored: StoredTemplateVersion): boolean {
    return this.verified.has(memoOf(stored, canonicalContent(stored)));
  }

  /** Throws 422 `template-signature-invalid` unless the stored version verifies. */
  async verify(stored: StoredTemplateVersion): Promise<void> {
    const canonical = canonicalContent(stored);
    const memo = memoOf(stored, canonical);
    if (this.verified.has(memo)) return;
    const failure = await this.check(stored, canonical);
    if (failure) {
      throw new DomainError(
        "template-signature-invalid",
        `template ${stored.templateId} version ${stored.version} no longer matches its signature (${failure}); create a new version`,
        { extensions: { template_id: stored.templateId, template_version: stored.version } },
      );
    }
    if (this.verified.size >= this.cacheSize) this.verified.clear();
    this.verified.set(memo, true);
  }

  /** Why the stored version does not verify, or undefined when it does. */
  private async check(
    stored: StoredTemplateVersion,
    canonical: string,
  ): Promise<string | undefined> {
    if (sha256Hex(canonical) !== stored.contentSha256) return "content hash mismatch";
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(stored.signature).kid;
    } catch {
      return "malformed signature";
    }
    if (typeof kid !== "string" || kid !== stored.kid) return "key id mismatch";
    const key = await this.keys.publicKey(TEMPLATE_KEY_PURPOSE, kid);
    if (!key) return "unknown signing key";
    try {
      const { payload } = await compactVerify(stored.signature, key, {
        algorithms: [this.keys.algorithm(TEMPLATE_KEY_PURPOSE)],
      });
      if (decoder.decode(payload) !== canonical) return "signed content differs";
    } catch {
      return "signature does not verify";
    }
    return undefined;
  }
}
