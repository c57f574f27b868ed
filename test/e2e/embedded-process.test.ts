import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const embedded = resolve(import.meta.dirname, "../../platform/dist/embedded.js");

const listening = (server: Server, port = 0) =>
  new Promise<number>((done, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      done(typeof address === "object" && address ? address.port : 0);
    });
  });

const freePort = async () => {
  const server = createServer();
  const port = await listening(server);
  await new Promise((done) => server.close(done));
  return port;
};

/**
 * `npm start` as a user runs it (platform/dist/embedded.js): a bootstrap secret the operator
 * supplied is never printed, and a taken admin port (9090 is also Prometheus's) does not stop
 * the platform.
 */
describe("the embedded process", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "switchboard-embedded-"));
  const secret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const squatter = createServer();
  let takenPort = 0;
  let child: ChildProcess;
  let stdout = "";
  let port = 0;

  beforeAll(async () => {
    takenPort = await listening(squatter);
    port = await freePort();
    child = spawn(process.execPath, [embedded], {
      env: {
        ...process.env,
        NODE_ENV: "development",
        DATA_DIR: dataDir,
        PORT: String(port),
        ADMIN_PORT: String(takenPort),
        EMBEDDED_SEED_COUNT: "50",
        BOOTSTRAP_CLIENT_ID: "cli_operator",
        BOOTSTRAP_CLIENT_SECRET: secret,
        REDIS_URL: "",
        DATABASE_URL: "",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const started = Date.now();
    while (!stdout.includes("Try it:")) {
      if (child.exitCode !== null) throw new Error(`embedded exited ${child.exitCode}:\n${stdout}`);
      if (Date.now() - started > 90_000) throw new Error(`embedded did not start:\n${stdout}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill("SIGKILL");
      await new Promise((done) => child.once("exit", done));
    }
    await new Promise((done) => squatter.close(done));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("names an operator-supplied bootstrap secret but never prints it", async () => {
    expect(stdout).toContain("client_id:     cli_operator");
    expect(stdout).toContain("the BOOTSTRAP_CLIENT_SECRET you set; not shown");
    expect(stdout).not.toContain(secret);
    // The secret works all the same.
    const token = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${Buffer.from(`cli_operator:${secret}`).toString("base64")}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });
    expect(token.status).toBe(200);
  });

  it("goes on with the admin port on a free port when its own is taken, and prints it", async () => {
    const admin = /admin: +(http:\/\/127\.0\.0\.1:(\d+))/.exec(stdout);
    expect(admin).not.toBeNull();
    expect(Number(admin![2])).not.toBe(takenPort);
    expect((await fetch(`${admin![1]}/livez`)).status).toBe(200);
    expect(stdout).not.toContain("EADDRINUSE");
  });

  it("stops on SIGTERM and exits 0", async () => {
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
