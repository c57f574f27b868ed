import { spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, isIPv6 } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Real SIP peers for the tests: baresip (a SIP phone, Debian's `baresip`) and SIPp (Debian's
 * `sip-tester`), started on loopback ports and killed afterwards. `.ci/run` installs both.
 */

/** The scenarios under test/sip/. */
export const sipScenarioDir = new URL("../sip/", import.meta.url).pathname;

/**
 * The loopback ports the tests' peers use, all below the kernel's ephemeral range (32768–60999),
 * where the kernel could hand one to another process's outgoing socket: SIP ports (and rtpengine's
 * control port) in 20000–25999, rtpengine's media windows in 26000–31999, baresip's RTP in
 * 10000–19999. Each Vitest worker (`VITEST_POOL_ID`, 1…maxWorkers) draws from its own slice of
 * each range, so files running at once never take the same port between the check that it is free
 * and the peer's bind, and no media port lands on a SIP port.
 */
const workerSlices = 12;
const workerIndex = (Number(process.env.VITEST_POOL_ID ?? "1") - 1) % workerSlices;
export function workerPortSlice(start: number, size: number): { min: number; max: number } {
  const width = Math.floor(size / workerSlices);
  const min = start + workerIndex * width;
  return { min, max: min + width - 1 };
}

const sipSlice = workerPortSlice(20_000, 6_000);
const sipSliceWidth = sipSlice.max - sipSlice.min + 1;
/**
 * The next candidate in this worker's SIP slice, walked in turn from a random start: a port
 * handed out is released before its peer binds it, so drawing at random could hand the same one
 * to two peers of one test (the edge's four replicas and the trunk draw six from 500).
 */
let sipCursor = Math.floor(Math.random() * sipSliceWidth);

/** A loopback port free for both UDP and TCP right now, from this worker's SIP slice. */
export async function freeSipPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const udp = createSocket("udp4");
    const candidate = sipSlice.min + (sipCursor++ % sipSliceWidth);
    const port = await new Promise<number | undefined>((resolve) => {
      udp.once("error", () => resolve(undefined));
      udp.bind(candidate, "127.0.0.1", () => resolve(udp.address().port));
    });
    if (port === undefined) {
      udp.close();
      continue;
    }
    const tcpFree = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    if (tcpFree) return port;
  }
  throw new Error("no free loopback port for UDP and TCP");
}

/** Waits for a child to exit, up to `ms`; true when it did. */
export function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export interface Baresip {
  /** What baresip printed (its SIP trace included), for diagnosing a failure. */
  output(): string;
  /** SIGTERM (baresip then unregisters), SIGKILL after `graceMs`; removes its config. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * A baresip registering `sip:<username>@<host>:<port>` with `password` every `regint` seconds
 * (its REGISTERs ask for that expiry), from a free loopback port it picks, over UDP (or TLS,
 * trusting `cafile`, with SRTP when `mediaenc` says so). Its config folder (`config` and
 * `accounts`, see baresip(1)) is a temporary one.
 */
export async function startBaresip(account: {
  username: string;
  password: string;
  registrar: { host: string; port: number };
  regint?: number;
  /** How it takes a call: `auto` answers at once; `manual` (the default) rings forever. */
  answermode?: "auto" | "manual";
  /** The transport it registers and takes calls over (default UDP); over TCP or TLS it keeps its connection open. */
  transport?: "udp" | "tcp" | "tls";
  /** A PEM CA file it trusts (the TLS listener's self-signed certificate). */
  cafile?: string;
  /** Media encryption: `srtp-mand` offers and accepts RTP/SAVP with SDES keys only. */
  mediaenc?: "srtp" | "srtp-mand";
}): Promise<Baresip> {
  const dir = mkdtempSync(join(tmpdir(), "baresip-"));
  const rtpPorts = workerPortSlice(10_000, 10_000);
  // Port 0: baresip binds UDP, TCP and (on the next port) TLS; a fixed port races other tests.
  writeFileSync(
    join(dir, "config"),
    [
      "poll_method epoll",
      "sip_listen 127.0.0.1:0",
      `rtp_ports ${rtpPorts.min}-${rtpPorts.max}`,
      "module_path /usr/lib/baresip/modules",
      // G.711 only, no audio device: its SDP offers PCMU/PCMA and a call needs no sound card.
      "module g711.so",
      ...(account.mediaenc ? ["module srtp.so"] : []),
      ...(account.cafile ? [`sip_cafile ${account.cafile}`] : []),
      "module_app account.so",
      "",
    ].join("\n"),
  );
  const { host, port: registrarPort } = account.registrar;
  writeFileSync(
    join(dir, "accounts"),
    `<sip:${account.username}@${host}:${registrarPort}${account.transport && account.transport !== "udp" ? `;transport=${account.transport}` : ""}>;auth_pass=${account.password};regint=${account.regint ?? 60};answermode=${account.answermode ?? "manual"}${account.mediaenc ? `;mediaenc=${account.mediaenc}` : ""}\n`,
    { mode: 0o600 },
  );
  const child = spawn("baresip", ["-f", dir, "-s"], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-200_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const started = await new Promise<Error | undefined>((resolve) => {
    child.once("spawn", () => resolve(undefined));
    child.once("error", resolve);
  });
  if (started) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`baresip did not start (is Debian's baresip installed?): ${started.message}`);
  }
  return {
    output: () => output,
    stop: async (graceMs = 3_000) => {
      child.kill("SIGTERM");
      if (!(await exited(child, graceMs))) {
        child.kill("SIGKILL");
        await exited(child, 2_000);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SippRun {
  /** 0 when the one call of the scenario succeeded. */
  code: number | null;
  output: string;
  /** The scenario's <log> lines. */
  logs: string[];
}

/**
 * Runs one call of a SIPp scenario of test/sip/ against `target`, from a free loopback port,
 * over UDP (`u1`) or TCP (`t1`); `keys` fill the scenario's `[name]` keywords. Ends within
 * `timeoutMs` (a timeout counts as a failure).
 */
export async function runSipp(options: {
  scenario: string;
  target: { host: string; port: number };
  transport?: "u1" | "t1";
  keys?: Record<string, string>;
  /** SIPp's other arguments (e.g. `-au`/`-ap`, the digest credentials of `[authentication]`). */
  args?: string[];
  /** The local port (default: a free one). */
  port?: number;
  /** Fills the scenario's `{{name}}` places (see startSippServer). */
  fill?: Record<string, string>;
  /** The loopback address SIPp sends from (default 127.0.0.1). */
  localHost?: string;
  /** Calls of the scenario it makes (default 1), at `rate` per second (SIPp's default 10). */
  calls?: number;
  rate?: number;
  timeoutMs?: number;
}): Promise<SippRun> {
  const port = options.port ?? (await freeSipPort());
  const host = isIPv6(options.target.host) ? `[${options.target.host}]` : options.target.host;
  return spawnSipp(options, port, [`${host}:${options.target.port}`]).done;
}

/**
 * SIPp as a UAS on `port` (UDP, or TCP with `t1`): it takes one call of the scenario (e.g. as
 * the carrier's trunk) and ends; it resolves once its socket is bound, `done` when it exited;
 * `stop` ends a SIPp that takes calls without a count (SIGTERM) and waits for it.
 */
export async function startSippServer(options: {
  scenario: string;
  port: number;
  transport?: "u1" | "t1";
  keys?: Record<string, string>;
  /** Calls it takes before it ends (default 1). */
  calls?: number;
  /** Fills the scenario's `{{name}}` places SIPp reads as it loads it (a status line, a pause). */
  fill?: Record<string, string>;
  /** The loopback address SIPp listens on (default 127.0.0.1; `::1` for IPv6). */
  localHost?: string;
  timeoutMs?: number;
}): Promise<{ done: Promise<SippRun>; stop(): Promise<SippRun> }> {
  const run = spawnSipp(options, options.port, []);
  // Bound once the kernel lists its socket (or SIPp already gave up). Not by trying to bind the
  // port here: a probe that held it for a moment could take it from SIPp's own bind (errno 98).
  for (let tries = 0; tries < 200; tries++) {
    if (bound(options.port, options.transport === "t1" ? "tcp" : "udp") || run.exited()) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    done: run.done,
    stop: () => {
      run.kill();
      return run.done;
    },
  };
}

/**
 * Whether a socket of this machine is bound to `port` (UDP) or listens on it (TCP), from the
 * kernel's tables (/proc/net/udp, udp6, tcp, tcp6: `local_address` as HEXADDR:HEXPORT, TCP's
 * state 0A is LISTEN), without touching the port.
 */
function bound(port: number, protocol: "udp" | "tcp"): boolean {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  return [protocol, `${protocol}6`].some((table) => {
    let text: string;
    try {
      text = readFileSync(`/proc/net/${table}`, "utf8");
    } catch {
      return false;
    }
    return text
      .split("\n")
      .slice(1)
      .some((line) => {
        const [, local, , state] = line.trim().split(/\s+/);
        return local?.endsWith(`:${hexPort}`) && (protocol === "udp" || state === "0A");
      });
  });
}

function spawnSipp(
  options: {
    scenario: string;
    transport?: "u1" | "t1";
    keys?: Record<string, string>;
    fill?: Record<string, string>;
    calls?: number;
    rate?: number;
    args?: string[];
    localHost?: string;
    timeoutMs?: number;
  },
  port: number,
  target: string[],
): { done: Promise<SippRun>; exited(): boolean; kill(): void } {
  const dir = mkdtempSync(join(tmpdir(), "sipp-"));
  let scenario = join(sipScenarioDir, options.scenario);
  if (options.fill) {
    const text = Object.entries(options.fill).reduce(
      (filled, [name, value]) => filled.replaceAll(`{{${name}}}`, value),
      readFileSync(scenario, "utf8"),
    );
    scenario = join(dir, "scenario.xml");
    writeFileSync(scenario, text);
  }
  const timeoutSeconds = Math.ceil((options.timeoutMs ?? 10_000) / 1000);
  const args = [
    ...target,
    "-sf",
    scenario,
    "-m",
    String(options.calls ?? 1),
    ...(options.rate !== undefined ? ["-r", String(options.rate)] : []),
    "-i",
    options.localHost ?? "127.0.0.1",
    "-p",
    String(port),
    "-t",
    options.transport ?? "u1",
    "-nostdin",
    "-timeout",
    `${timeoutSeconds}s`,
    "-timeout_error",
    "-trace_logs",
    "-log_file",
    join(dir, "scenario.log"),
    "-trace_err",
    "-error_file",
    join(dir, "errors.log"),
    ...Object.entries(options.keys ?? {}).flatMap(([name, value]) => ["-key", name, value]),
    ...(options.args ?? []),
  ];
  const child = spawn("sipp", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let exited = false;
  const done = waitSipp(child, dir, timeoutSeconds).finally(() => (exited = true));
  return {
    done,
    exited: () => exited,
    kill: () => {
      if (!exited) child.kill("SIGTERM");
    },
  };
}

async function waitSipp(
  child: ChildProcess,
  dir: string,
  timeoutSeconds: number,
): Promise<SippRun> {
  let output = "";
  child.stdout!.on(
    "data",
    (chunk: Buffer) => (output = (output + chunk.toString()).slice(-50_000)),
  );
  child.stderr!.on(
    "data",
    (chunk: Buffer) => (output = (output + chunk.toString()).slice(-50_000)),
  );
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", (error) =>
      reject(new Error(`sipp did not start (is Debian's sip-tester installed?): ${error.message}`)),
    );
    const killer = setTimeout(() => child.kill("SIGKILL"), (timeoutSeconds + 5) * 1000);
    child.once("exit", (exitCode) => {
      clearTimeout(killer);
      resolve(exitCode);
    });
  });
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name), "utf8");
    } catch {
      return "";
    }
  };
  const logs = read("scenario.log")
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const errors = read("errors.log");
  const leftovers = readdirSync(dir).join(", ");
  rmSync(dir, { recursive: true, force: true });
  return { code, output: `${output}\n${errors}\n(files: ${leftovers})`, logs };
}
