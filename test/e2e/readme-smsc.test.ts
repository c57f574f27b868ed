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
import { eventually } from "@switchboard/test-support/waiting";

const run = promisify(execFile);

/**
 * The README's "Connect an SMSC" as a user runs it: the test SMSC's CLI and `npm start`
 * (platform/dist/embedded.js) with the README's arguments and environment, then its shell
 * blocks through bash and curl, and the STOP typed into the SMSC's terminal.
 */
describe("README: Connect an SMSC", () => {
  const workDir = mkdtempSync(join(tmpdir(), "switchboard-readme-smsc-"));
  const processes: ChildProcess[] = [];
  let smscInput: NodeJS.WritableStream;
  let smscOutput = "";
  let platformOutput = () => "";
  let url = "";
  const [start = "", send = "", check = ""] = readmeShellBlocks("Connect an SMSC");

  beforeAll(async () => {
    const [smscLine = "", platformLine = ""] = start.trim().split("\n");
    const smscPort = String(await freePort());
    const smscArgs = smscLine
      .replace(/^npm run smsc -- /, "")
      .replace(/--port \d+/, `--port ${smscPort}`)
      .split(/\s+/);
    const smsc = spawn(process.execPath, [join(root, "test/smsc/dist/cli.js"), ...smscArgs], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    smsc.stdout!.on("data", (chunk: Buffer) => (smscOutput += chunk.toString()));
    smsc.stderr!.on("data", (chunk: Buffer) => (smscOutput += chunk.toString()));
    smscInput = smsc.stdin!;
    processes.push(smsc);
    const listening = await eventually(
      async () => smscOutput,
      (out) => out.includes("listening"),
    );
    expect(listening).toContain("listening");

    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const platform = await startReadmePlatform({
      workDir,
      port,
      env: { ...envAssignments(platformLine), SMPP_PORT: smscPort },
    });
    processes.push(platform.child);
    platformOutput = platform.output;
    const bound = await eventually(
      async () => smscOutput,
      (out) => /bind_transceiver.*switchboard/.test(out),
    );
    expect(bound).toMatch(/bind_transceiver.*switchboard/);
  }, 120_000);

  afterAll(() => {
    for (const child of processes) child.kill("SIGTERM");
    rmSync(workDir, { recursive: true, force: true });
  });

  const bash = (script: string) =>
    run("bash", ["-c", script.replaceAll("http://localhost:8080", url)], { cwd: workDir });

  it("has its three blocks: start, send, check", () => {
    expect(start).toMatch(/^npm run smsc -- [\s\S]*CARRIER=smpp[\s\S]*npm start/);
    expect(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.smsc).toBe(
      "node test/smsc/dist/cli.js",
    );
    expect(send).toContain("/v1/api/messages/send");
    expect(check).toContain("/v1/api/consents/$CONSENT");
  });

  it("sends an SMS through the SMSC, and the handset's STOP revokes its consent", async () => {
    const sent = await bash(`${send}\necho "VARS $NUMBER $CONSENT"`);
    expect(sent.stdout).toMatch(/"status":"delivered"/);
    const [, number = "", consent = ""] = /VARS (\S+) (\S+)/.exec(sent.stdout) ?? [];
    const instruction = /type in the SMSC's terminal: (mo .*)/.exec(sent.stdout)?.[1];
    expect(instruction).toBe(`mo +14155550100 ${number} STOP`);
    smscInput.write(`${instruction}\n`);
    const checked = await eventually(
      async () =>
        (await bash(`${send.split("\nNUMBER=")[0]}\nCONSENT=${consent}\n${check}`)).stdout,
      (out) => out.includes('"status":"revoked"'),
      10_000,
    );
    expect(checked).toContain('"status":"revoked"');
    expect(platformOutput()).not.toContain("s3cret");
  }, 60_000);
});
