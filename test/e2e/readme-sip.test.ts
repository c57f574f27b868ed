import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freeSipPort } from "@switchboard/test-support/sip-peers";

const root = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/** The fenced `sh` blocks of the README's "Connect a SIP trunk" section, in order. */
function sipBlocks(): string[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.split("\n## Connect a SIP trunk\n")[1]?.split("\n## ")[0] ?? "";
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });

/** `VAR=value` (or `VAR='value'`) pairs before `npm start` on the README's line. */
const envOf = (line: string) =>
  Object.fromEntries(
    [...line.matchAll(/([A-Z_]+)=('[^']*'|\S+)/g)].map((m) => [m[1]!, m[2]!.replace(/^'|'$/g, "")]),
  );

/**
 * The README's "Connect a SIP trunk" as a user runs it: SIPp's answering UAS as the trunk and
 * `npm start` (platform/dist/embedded.js) with the README's environment, then its shell block
 * through bash, curl and a real baresip — on free loopback ports instead of 5060/5080/8080.
 */
describe("README: Connect a SIP trunk", () => {
  const workDir = mkdtempSync(join(tmpdir(), "switchboard-readme-sip-"));
  const processes: ChildProcess[] = [];
  let platformOutput = "";
  let trunkOutput = "";
  let ports: { sip: number; trunk: number; caller: number; http: number };
  const [start = "", walk = ""] = sipBlocks();
  const onFreePorts = (text: string) =>
    text
      .replaceAll("http://localhost:8080", `http://localhost:${ports.http}`)
      .replaceAll("127.0.0.1:5060", `127.0.0.1:${ports.sip}`)
      .replaceAll("127.0.0.1:5080", `127.0.0.1:${ports.trunk}`)
      .replaceAll("-p 5081", `-p ${ports.caller}`)
      .replaceAll("test/sip/", `${root}/test/sip/`);

  beforeAll(async () => {
    ports = {
      sip: await freeSipPort(),
      trunk: await freeSipPort(),
      caller: await freeSipPort(),
      http: await freePort(),
    };
    const [trunkLine = "", platformLine = ""] = start
      .split("\n")
      .map((line) => line.replace(/\s+#.*$/, "").trim())
      .filter(Boolean);
    const trunkArgs = trunkLine
      .replace(/^sipp /, "")
      .replace(/-p 5080/, `-p ${ports.trunk}`)
      .split(/\s+/);
    // No terminal here: SIPp runs without reading its keyboard.
    const trunk = spawn("sipp", [...trunkArgs, "-nostdin"], { stdio: ["ignore", "pipe", "pipe"] });
    trunk.stdout!.on("data", (chunk: Buffer) => (trunkOutput += chunk.toString()));
    trunk.stderr!.on("data", (chunk: Buffer) => (trunkOutput += chunk.toString()));
    processes.push(trunk);

    const platform = spawn(process.execPath, [join(root, "platform/dist/embedded.js")], {
      cwd: workDir,
      env: {
        ...process.env,
        ...Object.fromEntries(
          Object.entries(envOf(platformLine)).map(([name, value]) => [name, onFreePorts(value)]),
        ),
        NODE_ENV: "development",
        DATA_DIR: join(workDir, ".switchboard"),
        PORT: String(ports.http),
        ADMIN_PORT: "0",
        EMBEDDED_SEED_COUNT: "200",
        REDIS_URL: "",
        DATABASE_URL: "",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    platform.stdout!.on("data", (chunk: Buffer) => (platformOutput += chunk.toString()));
    platform.stderr!.on("data", (chunk: Buffer) => (platformOutput += chunk.toString()));
    processes.push(platform);
    const started = Date.now();
    while (!platformOutput.includes("Try it:")) {
      if (platform.exitCode !== null) throw new Error(`npm start exited:\n${platformOutput}`);
      if (Date.now() - started > 90_000) throw new Error(`npm start hung:\n${platformOutput}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }, 120_000);

  afterAll(async () => {
    await run("pkill", ["-f", `baresip -f phone`], { cwd: workDir }).catch(() => undefined);
    await run("pkill", ["-f", `caller.xml .* -p ${ports.caller} `]).catch(() => undefined);
    for (const child of processes) child.kill("SIGTERM");
    rmSync(workDir, { recursive: true, force: true });
  });

  it("has its two blocks: the trunk and the platform, then the walk", () => {
    expect(start).toMatch(/^sipp -sn uas [\s\S]*VOICE_CARRIER=sip[\s\S]*npm start/);
    expect(walk).toContain("/v1/api/calls/outbound");
    expect(walk).toContain("baresip -f phone");
    expect(walk).toContain("/v1/api/calls/inbound/answer");
  });

  it("registers the phone, calls out through the trunk and hangs up, then answers a call coming in", async () => {
    // The README's pauses are for a person; here each wait is long enough for a loaded machine.
    const script = onFreePorts(walk).replace(/^sleep (\d+);/gm, "sleep $(( $1 * 3 ));");
    const { stdout, stderr } = await run("bash", ["-c", script], { cwd: workDir, timeout: 60_000 });
    const lines = stdout.trim().split("\n");
    expect(lines, `${stdout}\n${stderr}\n${platformOutput}`).toEqual([
      "true",
      "in_progress",
      "completed",
      "ringing",
      "in_progress",
      "completed",
    ]);
    const phoneLog = readFileSync(join(workDir, "phone", "log"), "utf8");
    expect(phoneLog).toMatch(/answer|established/i);
    // The seat's SIP password is shown to the API caller once and never logged.
    const password = /auth_pass=([^;]+)/.exec(
      readFileSync(join(workDir, "phone", "accounts"), "utf8"),
    );
    expect(password?.[1]).toMatch(/^sbsip_/);
    expect(platformOutput).not.toContain(password![1]);
  }, 90_000);
});
