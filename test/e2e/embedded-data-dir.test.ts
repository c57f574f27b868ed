import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyDecryptionError, openPrivateKey } from "@switchboard/kit";

/** What earlier versions sealed with when SIGNING_KEY_SECRET was unset (kit's DEVELOPMENT_SIGNING_KEY_SECRET). */
const DEVELOPMENT_SECRET = "switchboard-development-signing-key-secret";

const embedded = resolve(import.meta.dirname, "../../platform/dist/embedded.js");

interface Started {
  child: ChildProcess;
  output: string;
  gatewayUrl: string;
}

const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

/** `npm start` on `dataDir` until its banner is out. */
async function startEmbedded(dataDir: string, env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const {
    SIGNING_KEY_SECRET: _,
    BOOTSTRAP_CLIENT_ID: __,
    BOOTSTRAP_CLIENT_SECRET: ___,
    ...inherited
  } = process.env;
  const child = spawn(process.execPath, [embedded], {
    env: {
      ...inherited,
      NODE_ENV: "development",
      DATA_DIR: dataDir,
      PORT: String(port),
      ADMIN_PORT: "0",
      EMBEDDED_SEED_COUNT: "20",
      REDIS_URL: "",
      DATABASE_URL: "",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const started = Date.now();
  while (!output.includes("Try it:")) {
    if (child.exitCode !== null) throw new Error(`embedded exited ${child.exitCode}:\n${output}`);
    if (Date.now() - started > 90_000) throw new Error(`embedded did not start:\n${output}`);
    await new Promise((done) => setTimeout(done, 100));
  }
  return { child, output, gatewayUrl: `http://127.0.0.1:${port}` };
}

async function stop(started: Started | undefined): Promise<void> {
  const child = started?.child;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((done) => child.once("exit", done));
  child.kill("SIGTERM");
  await exited;
}

/** The TCP ports process `pid` listens on (from /proc: its socket inodes in LISTEN state). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set(
    readdirSync(`/proc/${pid}/fd`)
      .map((fd) => {
        try {
          return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        } catch {
          return undefined;
        }
      })
      .filter((inode): inode is string => inode !== undefined),
  );
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is fields[1] (hex ip:port), st is fields[3] (0A = LISTEN), inode fields[9].
      if (fields[3] === "0A" && inodes.has(fields[9]!)) {
        ports.push(parseInt(fields[1]!.split(":")[1]!, 16));
      }
    }
  }
  return ports;
}

const tokenStatus = async (url: string, id: string, secret: string) =>
  (
    await fetch(`${url}/oauth/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    })
  ).status;

/**
 * The embedded data dir (issue 27): the database is reachable only through a Unix socket in the
 * private data dir, the signing-key secret is generated into it (and takes over what an earlier
 * version sealed under the public development default), and the generated bootstrap secret is
 * printed by the first start only.
 */
describe("the embedded data dir", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "sb-dd-"));
  let current: Started | undefined;
  let firstOutput = "";

  beforeAll(async () => {
    // An earlier version's data dir: everything sealed under the development default.
    const first = await startEmbedded(dataDir, { SIGNING_KEY_SECRET: DEVELOPMENT_SECRET });
    firstOutput = first.output;
    await stop(first);
    current = await startEmbedded(dataDir);
  }, 240_000);

  afterAll(async () => {
    await stop(current);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const bootstrap = () =>
    JSON.parse(readFileSync(join(dataDir, "bootstrap.json"), "utf8")) as {
      clientId: string;
      clientSecret: string;
    };

  it("serves the database on a private Unix socket, and on no TCP port", async () => {
    const runtime = JSON.parse(readFileSync(join(dataDir, "runtime.json"), "utf8")) as {
      databaseUrl: string;
    };
    const url = new URL(runtime.databaseUrl);
    expect(url.searchParams.get("host")).toBe(dataDir);
    expect(runtime.databaseUrl).not.toMatch(/127\.0\.0\.1|:\d{2,5}\//);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, ".s.PGSQL.5432")).mode & 0o777).toBe(0o600);

    // The owner connects through the socket.
    const owner = new pg.Client({ connectionString: runtime.databaseUrl });
    await owner.connect();
    expect((await owner.query("SELECT count(*)::int AS n FROM gateway.clients")).rows[0].n).toBe(1);
    await owner.end();

    // No TCP port of the process speaks the Postgres protocol, whatever the credentials.
    const ports = listeningPorts(current!.child.pid!);
    expect(ports.length).toBeGreaterThan(0);
    for (const port of ports) {
      const stranger = new pg.Client({
        connectionString: `postgres://nobody:wrong@127.0.0.1:${port}/x`,
        connectionTimeoutMillis: 2_000,
      });
      stranger.on("error", () => undefined);
      await expect(stranger.connect()).rejects.toThrow();
      await stranger.end().catch(() => undefined);
    }
  });

  it("refuses another local user the socket (file permissions, as root runs this suite)", () => {
    // Run as nobody (uid 65534): the data dir (0700) bars it before the socket does.
    const script = `const s=require("net").connect(${JSON.stringify(join(dataDir, ".s.PGSQL.5432"))});s.on("connect",()=>{console.log("CONNECTED");process.exit(0)});s.on("error",e=>{console.log(e.code);process.exit(3)})`;
    const asNobody =
      process.getuid?.() === 0
        ? spawnSync(
            "setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", script],
            {
              encoding: "utf8",
            },
          )
        : spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    if (process.getuid?.() === 0) {
      expect(asNobody.stdout.trim()).toBe("EACCES");
      expect(asNobody.status).toBe(3);
    } else {
      // Not root: this user owns the dir; the permission bits checked above are the guard.
      expect(asNobody.stdout.trim()).toBe("CONNECTED");
    }
  });

  it("generates the signing-key secret into the data dir and re-seals the old default's keys", async () => {
    const secretFile = join(dataDir, "signing-key-secret");
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    const secret = readFileSync(secretFile, "utf8").trim();
    expect(secret.length).toBeGreaterThanOrEqual(32);

    const runtime = JSON.parse(readFileSync(join(dataDir, "runtime.json"), "utf8")) as {
      databaseUrl: string;
    };
    const client = new pg.Client({ connectionString: runtime.databaseUrl });
    await client.connect();
    const { rows } = await client.query<{
      kid: string;
      purpose: string;
      alg: string;
      private_key_encrypted: string;
    }>(
      `SELECT kid, purpose, alg, private_key_encrypted FROM gateway.signing_keys
       UNION ALL SELECT kid, purpose, alg, private_key_encrypted FROM usage.signing_keys`,
    );
    await client.end();
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) {
      const binding = { kid: row.kid, purpose: row.purpose, alg: row.alg };
      await expect(
        openPrivateKey(row.private_key_encrypted, DEVELOPMENT_SECRET, binding),
      ).rejects.toBeInstanceOf(KeyDecryptionError);
      await expect(openPrivateKey(row.private_key_encrypted, secret, binding)).resolves.toMatch(
        /PRIVATE KEY/,
      );
    }
    // The keys sealed by the earlier start still sign: a token is issued.
    const { clientId, clientSecret } = bootstrap();
    expect(await tokenStatus(current!.gatewayUrl, clientId, clientSecret)).toBe(200);
  });

  it("lets `switchboard admin` reach the database through the socket and seal with the secret", async () => {
    const cli = resolve(import.meta.dirname, "../../platform/dist/cli.js");
    const { SIGNING_KEY_SECRET: _, DATABASE_URL: __, ...inherited } = process.env;
    const rotated = spawnSync(process.execPath, [cli, "admin", "keys", "rotate"], {
      env: { ...inherited, DATA_DIR: dataDir },
      encoding: "utf8",
    });
    expect(rotated.status, rotated.stderr).toBe(0);
    // The new key is sealed under the data dir's secret, which every component reads.
    const kid = /kid: (key_\w+)/.exec(rotated.stdout)![1]!;
    const runtime = JSON.parse(readFileSync(join(dataDir, "runtime.json"), "utf8")) as {
      databaseUrl: string;
    };
    const client = new pg.Client({ connectionString: runtime.databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ purpose: string; alg: string; sealed: string }>(
      `SELECT purpose, alg, private_key_encrypted AS sealed FROM gateway.signing_keys
        WHERE kid = $1 AND status = 'active'`,
      [kid],
    );
    await client.end();
    const secret = readFileSync(join(dataDir, "signing-key-secret"), "utf8").trim();
    await expect(
      openPrivateKey(rows[0]!.sealed, secret, {
        kid,
        purpose: rows[0]!.purpose,
        alg: rows[0]!.alg,
      }),
    ).resolves.toMatch(/PRIVATE KEY/);
  });

  it("prints the generated bootstrap secret on the first start only", () => {
    const { clientSecret } = bootstrap();
    expect(firstOutput).toContain(clientSecret);
    expect(current!.output).not.toContain(clientSecret);
    expect(current!.output).toContain(`not shown again: see ${join(dataDir, "bootstrap.json")}`);
  });
});
