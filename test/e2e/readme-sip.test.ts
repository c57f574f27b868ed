import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@switchboard/test-support/free-port";
import {
  envAssignments,
  readmeShellBlocks,
  repoRoot as root,
  startReadmePlatform,
} from "@switchboard/test-support/readme";
import { freeSipPort } from "@switchboard/test-support/sip-peers";
import { skipWithoutTools } from "@switchboard/test-support/tools";

const run = promisify(execFile);

/**
 * The README's "Connect a SIP trunk" as a user runs it: SIPp's answering UAS as the trunk and
 * `npm start` (platform/dist/embedded.js) with the README's environment, then its shell block
 * through bash, curl and a real baresip — on free loopback ports instead of 5060/5080/8080.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip"]))(
  "README: Connect a SIP trunk",
  () => {
    let workDir: string;
    const processes: ChildProcess[] = [];
    let platformOutput = () => "";
    let trunkOutput = "";
    let ports: { sip: number; trunk: number; caller: number; http: number };
    const [start = "", walk = ""] = readmeShellBlocks("Connect a SIP trunk");
    const onFreePorts = (text: string) =>
      text
        .replaceAll("http://localhost:8080", `http://localhost:${ports.http}`)
        .replaceAll("127.0.0.1:5060", `127.0.0.1:${ports.sip}`)
        .replaceAll("127.0.0.1:5080", `127.0.0.1:${ports.trunk}`)
        .replaceAll("-p 5081", `-p ${ports.caller}`)
        .replaceAll("test/sip/", `${root}/test/sip/`);

    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), "switchboard-readme-sip-"));
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
      const trunk = spawn("sipp", [...trunkArgs, "-nostdin"], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      trunk.stdout!.on("data", (chunk: Buffer) => (trunkOutput += chunk.toString()));
      trunk.stderr!.on("data", (chunk: Buffer) => (trunkOutput += chunk.toString()));
      processes.push(trunk);

      const platform = await startReadmePlatform({
        workDir,
        port: ports.http,
        env: Object.fromEntries(
          Object.entries(envAssignments(platformLine)).map(([name, value]) => [
            name,
            onFreePorts(value),
          ]),
        ),
      });
      processes.push(platform.child);
      platformOutput = platform.output;
    }, 120_000);

    afterAll(async () => {
      await run("pkill", ["-f", `baresip -f phone`], { cwd: workDir }).catch(() => undefined);
      await run("pkill", ["-f", `caller.xml .* -p ${ports?.caller} `]).catch(() => undefined);
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
      const { stdout, stderr } = await run("bash", ["-c", script], {
        cwd: workDir,
        timeout: 60_000,
      });
      const lines = stdout.trim().split("\n");
      expect(lines, `${stdout}\n${stderr}\n${platformOutput()}`).toEqual([
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
      expect(platformOutput()).not.toContain(password![1]);
    }, 90_000);
  },
);
