import { machineBusyMs } from "../cpu-time.js";
import type { Network } from "./networks.js";
import type { Observer } from "./observer.js";
import { round } from "./stats.js";
import { settings, sleep, statsFlushMs } from "./settings.js";

/** Where the CPU time stands at a moment: the machine, this process (the platform), the network. */
export interface CpuMark {
  at: number;
  machine: number;
  process: number;
  network: number;
}

/** The CPU time spent between two marks (see `spent`). */
export interface CpuSpent {
  ms: number;
  served: number;
  platform: number;
  rest: number;
  network: number;
  generatorMs: number;
}

/** The platform with nothing to do, per second (`atRest`). */
export interface AtRest {
  seconds: number;
  cpu_ms_per_second: number;
  platform_process_cpu_ms_per_second: number;
  commits_per_second: number;
}

/** The platform's commits in a window, and what was left out of them (`commitCounter`). */
export interface WindowCommits {
  commits: number;
  bench_queries_left_out: number;
  at_rest_after_the_window_left_out: number;
}

const processCpuMsHere = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

export const cpuNow = (network: Network): CpuMark => ({
  at: Date.now(),
  machine: machineBusyMs(),
  process: processCpuMsHere(),
  network: network.cpuMs(),
});

/**
 * The CPU time spent from `a` to `b`: `served` is the machine's less the load generator's thread
 * and the network's, `platform` this process's less the generator, `rest` the difference
 * (PostgreSQL, Redis, and whatever else the machine ran).
 */
export function spent(a: CpuMark, b: CpuMark, generatorMs = 0): CpuSpent {
  const network = b.network - a.network;
  const served = b.machine - a.machine - generatorMs - network;
  const platform = b.process - a.process - generatorMs;
  return { ms: b.at - a.at, served, platform, rest: served - platform, network, generatorMs };
}

/** The platform with nothing to do (its pollers and timers), per second: CPU and commits. */
export async function atRest(db: Observer, network: Network): Promise<AtRest | undefined> {
  await sleep(statsFlushMs); // the statistics of the work before flushed
  if (settings.idleSeconds <= 0) return undefined;
  const commitsBefore = await db.commits();
  const before = cpuNow(network);
  await sleep(settings.idleSeconds * 1000);
  const rest = spent(before, cpuNow(network));
  const commits = (await db.commits()) - commitsBefore - 1;
  const seconds = rest.ms / 1000;
  return {
    seconds: round(seconds),
    cpu_ms_per_second: round(rest.served / seconds),
    platform_process_cpu_ms_per_second: round(rest.platform / seconds),
    commits_per_second: round(commits / seconds),
  };
}

/**
 * The platform's commits from now until `since(windowEnd)`: read once its statistics are
 * flushed, less the benchmark's own queries and less the commits at rest (`idle`'s rate) between
 * the window's end and the reading.
 */
export async function commitCounter(
  db: Observer,
  idle: AtRest | undefined,
): Promise<{ since(windowEnd: number): Promise<WindowCommits> }> {
  const before = await db.commits();
  const queriesBefore = db.queries;
  return {
    since: async (windowEnd) => {
      await sleep(statsFlushMs);
      const readAt = Date.now();
      const counted = (await db.commits()) - before;
      const own = db.queries - queriesBefore;
      const atRestAfter = ((idle?.commits_per_second ?? 0) * (readAt - windowEnd)) / 1000;
      return {
        commits: Math.round(counted - own - atRestAfter),
        bench_queries_left_out: own,
        at_rest_after_the_window_left_out: Math.round(atRestAfter),
      };
    },
  };
}
