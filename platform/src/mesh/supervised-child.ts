import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter, once } from "node:events";
import { createInterface } from "node:readline";

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildSpec {
  name: string;
  /** Arguments to `node` (flags, then the entry). */
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** True once the process serves (polled after every start until it is). */
  probe(): Promise<boolean>;
  /** Every line the process writes to stdout or stderr. */
  output(name: string, line: string): void;
  /** The supervisor's own messages about this process. */
  notice(message: string): void;
  /** Restart delays after an unexpected exit: doubling from `initialMs` up to `maxMs`. */
  backoff: { initialMs: number; maxMs: number };
  /** How long a SIGTERM may take before SIGKILL follows. */
  stopTimeoutMs: number;
}

/** One supervised process of the mesh. */
export interface MeshChild {
  readonly name: string;
  /** The running process's id (undefined while it waits to be restarted). */
  readonly pid: number | undefined;
  /** How many times it was started again (after a crash, or by `restart`). */
  readonly restarts: number;
  readonly ready: boolean;
  /** Signals the running process as something outside would; an exit is then restarted. */
  kill(signal?: NodeJS.Signals): boolean;
  /** Resolves when the running (or last) process has exited. */
  waitForExit(): Promise<ChildExit>;
  /** Resolves once a process of this child serves (after a restart: the new one). */
  waitReady(timeoutMs?: number): Promise<void>;
  /** SIGTERM (drain), then a new process; resolves when it is ready. */
  restart(): Promise<void>;
  /** SIGTERM (SIGKILL after the stop timeout) and no restart. */
  stop(): Promise<ChildExit | undefined>;
  /** SIGKILL now, synchronously (the supervisor's own exit). */
  forceKill(): void;
  /** The last lines of output. */
  logs(): string[];
}

const keptLines = 300;
const ranLongEnoughMs = 10_000;
const describeExit = (exit: ChildExit) =>
  exit.signal ? `signal ${exit.signal}` : `code ${String(exit.code)}`;

/**
 * Runs one component as `node <args>` in its own process group (a terminal's Ctrl-C reaches
 * only the supervisor, which then drains the children in order), keeps its recent output,
 * and restarts it with backoff whenever it exits without being asked to, as Kubernetes would.
 */
export function superviseChild(spec: ChildSpec): MeshChild {
  const events = new EventEmitter();
  const recent: string[] = [];
  let child: ChildProcess | undefined;
  let exited: Promise<ChildExit> = Promise.resolve({ code: null, signal: null });
  let ready = false;
  let readySince = 0;
  let stopped = false;
  let expected = false;
  let restarts = 0;
  let failures = 0;
  let backoffTimer: NodeJS.Timeout | undefined;

  const remember = (line: string) => {
    recent.push(line);
    if (recent.length > keptLines) recent.shift();
  };

  const onExit = (proc: ChildProcess, exit: ChildExit) => {
    if (child === proc) child = undefined;
    ready = false;
    if (stopped || expected) return;
    if (readySince && Date.now() - readySince > ranLongEnoughMs) failures = 0;
    const delay = Math.min(spec.backoff.maxMs, spec.backoff.initialMs * 2 ** failures);
    failures += 1;
    spec.notice(`${spec.name} exited (${describeExit(exit)}); restarting in ${delay} ms`);
    backoffTimer = setTimeout(() => {
      backoffTimer = undefined;
      if (stopped || child) return;
      restarts += 1;
      launch();
    }, delay);
  };

  const probeUntilReady = async (proc: ChildProcess) => {
    while (child === proc) {
      if (await spec.probe().catch(() => false)) {
        if (child !== proc) return;
        ready = true;
        readySince = Date.now();
        spec.notice(`${spec.name} ready (pid ${proc.pid})`);
        events.emit("ready");
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const launch = () => {
    expected = false;
    readySince = 0;
    const proc = spawn(process.execPath, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    child = proc;
    for (const stream of [proc.stdout, proc.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
        remember(line);
        spec.output(spec.name, line);
      });
    }
    exited = new Promise<ChildExit>((resolve) => {
      const finish = (exit: ChildExit) => {
        onExit(proc, exit);
        resolve(exit);
      };
      proc.once("exit", (code, signal) => finish({ code, signal }));
      proc.once("error", (error) => {
        // Only a process that never started ends here; a failed kill leaves it running.
        if (proc.pid !== undefined) return;
        remember(`could not start: ${error.message}`);
        finish({ code: null, signal: null });
      });
    });
    void probeUntilReady(proc);
  };

  const terminate = async (): Promise<ChildExit | undefined> => {
    if (backoffTimer) clearTimeout(backoffTimer);
    backoffTimer = undefined;
    const proc = child;
    if (!proc) return undefined;
    const exit = exited;
    expected = true;
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), spec.stopTimeoutMs);
    try {
      return await exit;
    } finally {
      clearTimeout(timer);
    }
  };

  const handle: MeshChild = {
    name: spec.name,
    get pid() {
      return child?.pid;
    },
    get restarts() {
      return restarts;
    },
    get ready() {
      return ready;
    },
    kill: (signal = "SIGTERM") => child?.kill(signal) ?? false,
    waitForExit: () => exited,
    waitReady: async (timeoutMs = 60_000) => {
      if (ready) return;
      if (stopped) throw new Error(`${spec.name} is stopped`);
      try {
        await once(events, "ready", { signal: AbortSignal.timeout(timeoutMs) });
      } catch {
        const tail = recent.slice(-40).join("\n");
        throw new Error(`${spec.name} was not ready within ${timeoutMs} ms; last output:\n${tail}`);
      }
    },
    restart: async () => {
      await terminate();
      if (stopped) return;
      restarts += 1;
      launch();
      await handle.waitReady();
    },
    stop: () => {
      stopped = true;
      return terminate();
    },
    forceKill: () => {
      stopped = true;
      if (backoffTimer) clearTimeout(backoffTimer);
      child?.kill("SIGKILL");
    },
    logs: () => [...recent],
  };
  launch();
  return handle;
}
