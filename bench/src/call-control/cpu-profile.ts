/** A V8 CPU profile (the parts this summary reads). */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

export interface CpuShare {
  /** Who the time went to: a workspace package, an npm package, socket writes, GC, idle. */
  owner: string;
  ms: number;
  percent: number;
}

const workspace = /\/(services\/[^/]+|gateway|packages\/kit|platform)\/dist\//;
const npm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//;

/**
 * Self time of the measured window by owner: each sample goes to the nearest frame on its stack
 * that belongs to a workspace package (or, failing that, to an npm package); socket writes,
 * garbage collection and idle time are counted on their own.
 */
export function cpuShares(profile: CpuProfile, top = 12): CpuShare[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((sample, index) => {
    const micros = profile.timeDeltas[index] ?? 0;
    all += micros;
    const leaf = byId.get(sample)?.callFrame;
    let owner: string | undefined;
    if (leaf?.functionName === "(idle)") owner = "(idle)";
    else if (leaf?.functionName === "(garbage collector)") owner = "(garbage collector)";
    else if (leaf && ["writev", "writeBuffer", "writeUtf8String"].includes(leaf.functionName)) {
      owner = "(socket writes)";
    } else {
      let fallback: string | undefined;
      // The load loop runs on its own thread; what shows here of the benchmark is the profiler.
      for (let id: number | undefined = sample; id !== undefined && !owner; id = parent.get(id)) {
        if ((byId.get(id)?.callFrame.url ?? "").includes("/dist/bench/")) owner = "(profiler)";
      }
      for (let id: number | undefined = sample; id !== undefined && !owner; id = parent.get(id)) {
        const url = byId.get(id)?.callFrame.url ?? "";
        owner = workspace.exec(url)?.[1];
        fallback ??= npm.exec(url)?.[1];
      }
      owner ??= fallback ?? "(node internals)";
    }
    totals.set(owner, (totals.get(owner) ?? 0) + micros);
  });
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([owner, micros]) => ({
      owner,
      ms: Math.round(micros / 1000),
      percent: Math.round((micros / Math.max(1, all)) * 1000) / 10,
    }));
}
