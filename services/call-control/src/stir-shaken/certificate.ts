import { webcrypto } from "node:crypto";
import type { Pool, SigningKeyStore } from "@switchboard/kit";
import "./reflect-metadata.js";
import * as x509 from "@peculiar/x509";
import { tnAuthListDer, tnAuthListOid } from "./tn-auth-list.js";

export const passportPurpose = "passport";

export interface StirCertificate {
  kid: string;
  pem: string;
  notAfter: Date;
}

const validityDays = 365;
const renewWithinDays = 30;
const dayMs = 86_400_000;

type X509Crypto = Parameters<typeof x509.cryptoProvider.set>[0];
type X509Key = Parameters<typeof x509.SubjectKeyIdentifierExtension.create>[0];
type X509KeyPair = Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]["keys"];

x509.cryptoProvider.set(webcrypto as unknown as X509Crypto);

/**
 * The self-signed STIR/SHAKEN certificate of the active PASSporT key (ES256), kept in
 * call_control.stir_certificates: made when a key has none (first start, after a rotation) and
 * renewed within 30 days of expiry. Its subject names the platform; its TNAuthList carries the
 * service provider code. Relying parties fetch it from the PASSporT's `x5u`.
 */
export class StirCertificates {
  private current: Promise<StirCertificate> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly keys: SigningKeyStore,
    private readonly serviceProviderCode: string,
  ) {}

  /** The certificate of the key PASSporTs are signed with now. */
  async active(): Promise<StirCertificate> {
    const { kid } = await this.keys.activeKey(passportPurpose);
    const cached = await this.current?.catch(() => undefined);
    if (cached && cached.kid === kid && !renewable(cached)) return cached;
    this.current = this.load(kid);
    return this.current;
  }

  private async load(kid: string): Promise<StirCertificate> {
    const stored = await this.pool.query<{ certificate_pem: string; not_after: Date }>(
      `SELECT certificate_pem, not_after FROM call_control.stir_certificates WHERE kid = $1`,
      [kid],
    );
    const row = stored.rows[0];
    if (row && !renewable({ notAfter: row.not_after })) {
      return { kid, pem: row.certificate_pem, notAfter: row.not_after };
    }
    const made = await this.issue(kid);
    await this.pool.query(
      `INSERT INTO call_control.stir_certificates (kid, certificate_pem, not_before, not_after)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (kid) DO UPDATE
         SET certificate_pem = EXCLUDED.certificate_pem, not_before = EXCLUDED.not_before,
             not_after = EXCLUDED.not_after
       WHERE stir_certificates.not_after < EXCLUDED.not_after`,
      [kid, made.pem, made.notBefore, made.notAfter],
    );
    return { kid, pem: made.pem, notAfter: made.notAfter };
  }

  private async issue(kid: string) {
    const active = await this.keys.activeKey(passportPurpose);
    if (active.kid !== kid)
      throw new Error("the passport key changed while its certificate was made");
    const jwk = (await this.keys.publicJwks()).keys.find((key) => key.kid === kid);
    if (!jwk) throw new Error(`the public key ${kid} is not published`);
    const { kty, crv, x, y } = jwk;
    const publicKey = await webcrypto.subtle.importKey(
      "jwk",
      { kty, crv, x, y } as webcrypto.JsonWebKey,
      { name: "ECDSA", namedCurve: "P-256" },
      true,
      ["verify"],
    );
    const notBefore = new Date(Date.now() - 60_000);
    const notAfter = new Date(notBefore.getTime() + validityDays * dayMs);
    const name = `CN=Switchboard STIR/SHAKEN ${this.serviceProviderCode}, O=Switchboard`;
    const certificate = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
        .toString("hex")
        .replace(/^[89a-f]/, "1"),
      name,
      notBefore,
      notAfter,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
      keys: { privateKey: active.privateKey, publicKey } as unknown as X509KeyPair,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        await x509.SubjectKeyIdentifierExtension.create(publicKey as unknown as X509Key),
        new x509.Extension(tnAuthListOid, false, tnAuthListDer(this.serviceProviderCode)),
      ],
    });
    return { pem: certificate.toString("pem"), notBefore, notAfter };
  }
}

const renewable = (certificate: { notAfter: Date }) =>
  certificate.notAfter.getTime() - Date.now() < renewWithinDays * dayMs;
