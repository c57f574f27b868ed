import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, readdirSync } from "node:fs";
import { Redis } from "ioredis";
import { freePort } from "@switchboard/test-support/free-port";

/**
 * A PostgreSQL cluster and a Redis server of the test's own, for faults that kill, stop or
 * pause them: never the machine's 5432 and 6379 (Debian's pg_createcluster and redis-server).
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** True when this machine can make a cluster of its own (Debian's postgresql-common, as root). */
export const canOwnStores = (): boolean =>
  existsSync("/usr/bin/pg_createcluster") &&
  existsSync("/usr/bin/redis-server") &&
  process.getuid?.() === 0;

export interface OwnPostgres {
  url: string;
  port: number;
  /** `pg_ctlcluster … stop -m fast` (a restart: `stop` then `start`). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP every process of the cluster (postmaster and backends); `resume` sends SIGCONT. */
  pause(): void;
  resume(): void;
  drop(): void;
}

export async function startOwnPostgres(name: string): Promise<OwnPostgres> {
  const version = readdirSync("/etc/postgresql")[0]!;
  const port = await freePort();
  const cluster = `${name}${port}`;
  const run = (...args: string[]) => execFileSync(args[0]!, args.slice(1), { stdio: "pipe" });
  run("pg_createcluster", version, cluster, "--port", String(port), "--", "--auth=trust");
  run("pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, "start");
  const pids = () =>
    execFileSync("pgrep", ["-f", `${version}/${cluster}`], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number)
      .concat(
        Number(
          execFileSync("head", ["-1", `/var/lib/postgresql/${version}/${cluster}/postmaster.pid`], {
            encoding: "utf8",
          }).trim(),
        ),
      );
  const signal = (sig: NodeJS.Signals) => {
    for (const pid of new Set(pids())) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone meanwhile
      }
    }
  };
  // Asynchronous: the test's clients keep sending while the cluster stops and starts.
  const ctl = async (...args: string[]) => {
    await promisify(execFile)("pg_ctlcluster", [
      "--skip-systemctl-redirect",
      version,
      cluster,
      ...args,
    ]);
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => ctl("stop", "-m", "fast"),
    start: () => ctl("start"),
    pause: () => signal("SIGSTOP"),
    resume: () => signal("SIGCONT"),
    drop: () => {
      try {
        run("pg_dropcluster", "--stop", version, cluster);
      } catch {
        // already gone
      }
    },
  };
}

export interface OwnRedis {
  url: string;
  /** SIGKILL (no persistence: everything it held is gone). */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
    for (let i = 0; i < 100; i += 1) {
      const probe = new Redis({
        port,
        host: "127.0.0.1",
        lazyConnect: true,
        retryStrategy: () => null,
      });
      const up = await probe.connect().then(
        () => true,
        () => false,
      );
      probe.disconnect();
      if (up) return;
      await sleep(50);
    }
    throw new Error("redis-server did not start");
  };
  const kill = async () => {
    const exited = new Promise((resolve) => child?.once("exit", resolve));
    child?.kill("SIGKILL");
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, kill, start, stop: kill };
}
