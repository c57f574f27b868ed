/**
 * CPU time as /proc reports it (Linux), for cpu-ms per request measured the way
 * ../shared/bench/monolith-anchor measures it: the machine's CPU time in a window less what the
 * load generator (and, where one runs, a simulated network) used of it.
 */
import { readFileSync } from "node:fs";

const tickMs = 1000 / 100; // USER_HZ: /proc reports CPU time in 1/100 s on Linux

/** CPU time of every process on the machine (/proc/stat: user, nice, system, irq, softirq, steal). */
export const machineBusyMs = () => {
  const f = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * tickMs;
};

/** utime + stime of a /proc/…/stat file (the fields after the command name's closing paren). */
const statCpuMs = (path) => {
  const text = readFileSync(path, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * tickMs;
};

/** CPU time of the calling thread since it started (/proc/thread-self/stat). */
export const threadCpuMs = () => statCpuMs("/proc/thread-self/stat");

/** CPU time of another process, all its threads (/proc/<pid>/stat). */
export const processCpuMs = (pid) => statCpuMs(`/proc/${pid}/stat`);
