import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCertificate {
  /** PEM files: the certificate (self-signed, so also its own CA) and its private key. */
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
  /** Removes the files. */
  remove(): void;
}

/**
 * A self-signed P-256 certificate for `127.0.0.1` and `localhost` valid for a day, made with
 * the openssl command line in a temporary folder (the SIP listener's certificate of the TLS
 * tests: a peer that trusts it takes it as its CA).
 */
export function selfSignedCertificate(cn = "localhost"): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), "switchboard-sip-tls-"));
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "1",
      "-subj",
      `/CN=${cn}`,
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ],
    { stdio: "pipe" },
  );
  return {
    certFile,
    keyFile,
    cert: readFileSync(certFile),
    key: readFileSync(keyFile),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
