import { spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processCpuMs } from "../cpu-time.js";

/**
 * SIPp (Debian's `sip-tester`) for the calls benchmark's sip run: the seats' phone and the
 * carrier's trunk, on loopback over UDP, with the scenarios of test/sip/ and the argument shapes
 * of test/support/sip-peers.ts (which the benchmark cannot import).
 */

/** test/sip/, from bench/dist/call-control/. */
const scenarioDir = new URL("../../../test/sip/", import.meta.url).pathname;

/**
 * A loopback port free for both UDP and TCP right now, below the kernel's ephemeral range
 * (32768–60999), so that no outgoing socket takes it before SIPp binds it.
 */
export async function freeSipPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    if ((await udpFree(candidate)) && (await tcpFree(candidate))) return candidate;
  }
  throw new Error("no free loopback port for UDP and TCP");
}

const udpFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const udp = createSocket("udp4");
    udp.once("error", () => {
      udp.close();
      resolve(false);
    });
    udp.bind(port, "127.0.0.1", () => udp.close(() => resolve(true)));
  });

const tcpFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });

export interface Sipp {
  pid: number;
  /** Its CPU time so far (/proc/<pid>/stat utime + stime); throws once it has exited. */
  cpuMs(): number;
  /**
   * The calls it counted successful and failed, from the last screen it printed (it prints one
   * as it exits: read after stop for the final counts).
   */
  counts(): { successful: number | null; failed: number | null };
  /** What it printed and logged as errors (the last 4 000 characters), for a failure. */
  output(): string;
  exited(): boolean;
  /** Resolves with its exit code once it has exited. */
  exit: Promise<number | null>;
  /** SIGTERM, SIGKILL after 3 s; removes its folder. */
  stop(): Promise<void>;
}

/**
 * Starts SIPp on 127.0.0.1:`port` (UDP) with a scenario of test/sip/, its `{{name}}` places
 * filled from `fill`, towards `target` (none: a UAS). Its screen and errors go to files of a
 * temporary folder, not through this process.
 */
export function startSipp(options: {
  scenario: string;
  port: number;
  target?: { host: string; port: number };
  calls: number;
  keys?: Record<string, string>;
  fill?: Record<string, string>;
  args?: string[];
  timeoutSeconds?: number;
}): Sipp {
  const dir = mkdtempSync(join(tmpdir(), "bench-sipp-"));
  let scenario = join(scenarioDir, options.scenario);
  if (options.fill) {
    const text = Object.entries(options.fill).reduce(
      (filled, [name, value]) => filled.replaceAll(`{{${name}}}`, value),
      readFileSync(scenario, "utf8"),
    );
    scenario = join(dir, "scenario.xml");
    writeFileSync(scenario, text);
  }
  const args = [
    ...(options.target ? [`${options.target.host}:${options.target.port}`] : []),
    "-sf",
    scenario,
    "-m",
    String(options.calls),
    "-i",
    "127.0.0.1",
    "-p",
    String(options.port),
    "-t",
    "u1",
    "-nostdin",
    ...(options.timeoutSeconds ? ["-timeout", `${options.timeoutSeconds}s`, "-timeout_error"] : []),
    "-trace_err",
    "-error_file",
    join(dir, "errors.log"),
    ...Object.entries(options.keys ?? {}).flatMap(([name, value]) => ["-key", name, value]),
    ...(options.args ?? []),
  ];
  const screen = openSync(join(dir, "screen.log"), "w");
  const child: ChildProcess = spawn("sipp", args, { cwd: dir, stdio: ["ignore", screen, screen] });
  closeSync(screen);
  let exited = false;
  const exit = new Promise<number | null>((resolve, reject) => {
    child.once("error", (error) =>
      reject(new Error(`sipp did not start (is Debian's sip-tester installed?): ${error.message}`)),
    );
    child.once("exit", (code) => {
      exited = true;
      resolve(code);
    });
  });
  exit.catch(() => undefined);
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name), "utf8");
    } catch {
      return "";
    }
  };
  const last = (text: string, label: string) => {
    const all = [...text.matchAll(new RegExp(`${label}\\s*\\|\\s*\\d+\\s*\\|\\s*(\\d+)`, "g"))];
    const value = all.at(-1)?.[1];
    return value === undefined ? null : Number(value);
  };
  let removed = false;
  let final: { successful: number | null; failed: number | null } | undefined;
  return {
    pid: child.pid ?? -1,
    cpuMs: () => processCpuMs(child.pid ?? -1),
    counts: () => {
      if (final) return final;
      const text = read("screen.log");
      return { successful: last(text, "Successful call"), failed: last(text, "Failed call") };
    },
    output: () => `${read("screen.log").slice(-3_000)}\n${read("errors.log").slice(-1_000)}`,
    exited: () => exited,
    stop: async () => {
      if (!exited) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
        await exit.catch(() => undefined);
        clearTimeout(timer);
      }
      if (removed) return;
      const text = read("screen.log");
      final = { successful: last(text, "Successful call"), failed: last(text, "Failed call") };
      rmSync(dir, { recursive: true, force: true });
      removed = true;
    },
    exit,
  };
}

/** Runs one call of a scenario (e.g. a REGISTER) and waits for SIPp to end: 0 when it succeeded. */
export async function runSipp(options: Parameters<typeof startSipp>[0]): Promise<{
  code: number | null;
  output: string;
}> {
  const sipp = startSipp({ timeoutSeconds: 10, ...options });
  const code = await sipp.exit;
  const output = sipp.output();
  await sipp.stop();
  return { code, output };
}

/** Waits until SIPp has bound its UDP port (or exited). */
export async function bound(sipp: Sipp, port: number): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (sipp.exited()) throw new Error(`sipp exited at start:\n${sipp.output()}`);
    if (!(await udpFree(port))) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`sipp did not bind 127.0.0.1:${port}`);
}
