import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
export { freePort } from "@switchboard/test-support/free-port";

const root = join(import.meta.dirname, "..", "..", "..");

/** One built entry script (e.g. services/inventory/dist/main.js) run as the image runs it. */
export interface ServiceProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal) once the process has exited. */
  exited: Promise<number | string>;
  stop(): Promise<void>;
}

export function startServiceProcess(entry: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [join(root, entry)], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "production", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  return {
    child,
    output: () => text,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * A CA and one certificate signed by it for `names` and 127.0.0.1, as the chart's grpcTls Secret
 * holds them (tls.crt, tls.key, ca.crt, in one folder): every component serves and dials with
 * the same one.
 */
export function issueGrpcTlsFiles(names: readonly string[] = ["localhost"]): {
  dir: string;
  cert: string;
  key: string;
  ca: string;
} {
  const dir = mkdtempSync(join(tmpdir(), "sb-grpc-tls-"));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=test-ca",
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.crt"),
  );
  openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=localhost",
    "-keyout",
    file("tls.key"),
    "-out",
    file("tls.csr"),
  );
  const extensions = file("san.ext");
  const dns = names.map((name) => `DNS:${name}`).join(",");
  writeFileSync(extensions, `subjectAltName=${dns},IP:127.0.0.1\n`);
  openssl(
    "x509",
    "-req",
    "-in",
    file("tls.csr"),
    "-CA",
    file("ca.crt"),
    "-CAkey",
    file("ca.key"),
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    extensions,
    "-out",
    file("tls.crt"),
  );
  // Read by containers running as uid 1000 (a test key, thrown away with the folder).
  chmodSync(dir, 0o755);
  chmodSync(file("tls.key"), 0o644);
  return { dir, cert: file("tls.crt"), key: file("tls.key"), ca: file("ca.crt") };
}
