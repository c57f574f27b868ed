import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { exited } from "./sip-peers.js";

/**
 * The real SIP edge for the tests: Debian's kamailio running a configuration the test gives
 * (the chart's files/sip-edge/kamailio.cfg, as rendered), with the settings the chart's
 * Deployment passes in its environment, on loopback ports, killed afterwards. `.ci/run`
 * installs kamailio and kamailio-tls-modules.
 */

const run = promisify(execFile);

export interface SipEdgeOptions {
  /** The kamailio.cfg text. */
  config: string;
  /** The phones' UDP and TCP port. */
  phonePort: number;
  /** The UDP port facing call-control (its Path names it). */
  corePort: number;
  /** call-control's replicas (dispatcher set 1). */
  replicas: { host: string; port: number }[];
  /** Requests per source per 2 s before pike bans it (sipEdge.flood.requestsPerTwoSeconds). */
  requestsPerTwoSeconds?: number;
  /** Failed REGISTER digests from a source that ban it (sipEdge.flood.authFailures). */
  authFailures?: number;
  banSeconds?: number;
  /** OPTIONS probe interval (sipEdge.probeSeconds). */
  probeSeconds?: number;
  /** TLS on this port with these PEM files (sipEdge.tls). */
  tls?: { port: number; certificate: string; key: string };
}

export interface SipEdge {
  /** The dispatcher's destinations and their flags (`AP`: active and probed; `IP`: down). */
  destinations(): Promise<{ uri: string; flags: string }[]>;
  /** What kamailio logged. */
  output(): string;
  stop(): Promise<void>;
}

export async function startSipEdge(options: SipEdgeOptions): Promise<SipEdge> {
  const dir = mkdtempSync(join(tmpdir(), "sip-edge-"));
  const configFile = join(dir, "kamailio.cfg");
  const listFile = join(dir, "dispatcher.list");
  const ctl = `unix:${join(dir, "ctl")}`;
  writeFileSync(configFile, options.config);
  writeFileSync(listFile, options.replicas.map((r) => `1 sip:${r.host}:${r.port}\n`).join(""));
  const host = "127.0.0.1";
  const env = {
    PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin",
    EDGE_PHONE_UDP: `udp:${host}:${options.phonePort}`,
    EDGE_PHONE_TCP: `tcp:${host}:${options.phonePort}`,
    EDGE_CORE: `udp:${host}:${options.corePort}`,
    EDGE_DISPATCHER_LIST: listFile,
    EDGE_CTL: ctl,
    EDGE_PIKE_DENSITY: String(options.requestsPerTwoSeconds ?? 30),
    EDGE_AUTH_FAILURES: String(options.authFailures ?? 10),
    EDGE_BAN_SECONDS: String(options.banSeconds ?? 300),
    EDGE_PING_SECONDS: String(options.probeSeconds ?? 1),
    EDGE_CHILDREN: "2",
    ...(options.tls
      ? {
          EDGE_PHONE_TLS: `tls:${host}:${options.tls.port}`,
          EDGE_TLS_CERT: options.tls.certificate,
          EDGE_TLS_KEY: options.tls.key,
        }
      : {}),
  };
  // As files/sip-edge/entrypoint.sh starts it.
  const args = ["-DD", "-E", "-m", "32", "-M", "4", "-Y", dir, "-f", configFile];
  if (options.tls) args.push("-A", "WITH_TLS");
  const child = spawn("kamailio", args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-400_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const started = await new Promise<Error | undefined>((resolve) => {
    child.once("spawn", () => resolve(undefined));
    child.once("error", resolve);
  });
  if (started) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`kamailio did not start (is Debian's kamailio installed?): ${started.message}`);
  }
  const stop = async () => {
    child.kill("SIGTERM");
    if (!(await exited(child, 5_000))) {
      child.kill("SIGKILL");
      await exited(child, 2_000);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await listening(host, options.phonePort, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    output: () => output,
    stop,
    destinations: async () => {
      const { stdout } = await run("kamcmd", ["-s", ctl, "dispatcher.list"]);
      const found: { uri: string; flags: string }[] = [];
      const pattern = /URI: (\S+)\s+FLAGS: (\S+)/g;
      for (let match = pattern.exec(stdout); match; match = pattern.exec(stdout)) {
        found.push({ uri: match[1]!, flags: match[2]! });
      }
      return found;
    },
  };
}

/** Resolves once kamailio accepts TCP on the phones' port; throws if it exits first. */
async function listening(
  host: string,
  port: number,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`kamailio exited (${child.exitCode ?? child.signalCode}):\n${output()}`);
    }
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, host);
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`kamailio did not listen on ${host}:${port}:\n${output()}`);
}
