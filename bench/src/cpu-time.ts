/**
 * CPU time as /proc reports it (Linux), for cpu-ms per request measured the way
 * ../shared/bench/monolith-anchor measures it: the machine's CPU time in a window less what the
 * load generator (and, where one runs, a simulated network) used of it. The benchmarks written
 * as .mjs import the built module (bench/dist/cpu-time.js), the TypeScript ones this source.
 */
import { readdirSync, readFileSync } from "node:fs";

const tickMs = 1000 / 100; // USER_HZ: /proc reports CPU time in 1/100 s on Linux

/** CPU time of every process on the machine (/proc/stat: user, nice, system, irq, softirq, steal). */
export const machineBusyMs = (): number => {
  const f = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) * tickMs;
};

/** The fields of a /proc/…/stat text after the command name's closing paren (state first). */
const afterComm = (text: string): string[] => text.slice(text.lastIndexOf(")") + 2).split(" ");
const statFields = (path: string): string[] => afterComm(readFileSync(path, "utf8"));

/** utime + stime of a /proc/…/stat file. */
const statCpuMs = (path: string): number => {
  const fields = statFields(path);
  return (Number(fields[11]) + Number(fields[12])) * tickMs;
};

/** CPU time of the calling thread since it started (/proc/thread-self/stat). */
export const threadCpuMs = (): number => statCpuMs("/proc/thread-self/stat");

/** CPU time of another process, all its threads (/proc/<pid>/stat). */
export const processCpuMs = (pid: number): number => statCpuMs(`/proc/${pid}/stat`);

/**
 * CPU time of a process's children that have exited and been waited for (cutime + cstime): a
 * PostgreSQL backend that ends is counted in its postmaster's.
 */
export const reapedChildrenCpuMs = (pid: number): number => {
  const fields = statFields(`/proc/${pid}/stat`);
  return (Number(fields[13]) + Number(fields[14])) * tickMs;
};

/**
 * How often a process's threads went to sleep and were woken (voluntary context switches,
 * summed over /proc/<pid>/task/<tid>/status): a process that polls wakes up often.
 */
export const processWakeups = (pid: number): number =>
  readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
      return sum + Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    } catch {
      return sum; // the thread ended meanwhile
    }
  }, 0);

export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** The command name (/proc/<pid>/comm, at most 15 characters). */
  comm: string;
  /** The command line, its arguments joined by spaces. */
  cmdline: string;
}

/** Every process this user can see, read from /proc (a process gone meanwhile is skipped). */
export const listProcesses = (): ProcessEntry[] =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const text = readFileSync(`/proc/${name}/stat`, "utf8");
        return [
          {
            pid: Number(name),
            ppid: Number(afterComm(text)[1]),
            comm: text.slice(text.indexOf("(") + 1, text.lastIndexOf(")")),
            cmdline: readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim(),
          },
        ];
      } catch {
        return [];
      }
    });
