/** Latency statistics in milliseconds, as every benchmark reports them. */
export interface LatencyStats {
  n: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  mean: number;
  max: number;
}

/** The same request with a layer off and on, and what the layer adds at each point. */
export interface LatencyComparison {
  name: string;
  description: string;
  off: LatencyStats;
  on: LatencyStats;
  added: { p50: number; p90: number; p99: number; mean: number };
}

const round = (value: number) => Math.round(value * 1000) / 1000;

/** The nearest-rank percentile of ascending `sorted` samples (0 when there are none). */
export const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;

export function summarizeLatency(samples: readonly number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => round(percentile(sorted, p));
  return {
    n: sorted.length,
    p50: at(50),
    p90: at(90),
    p95: at(95),
    p99: at(99),
    p999: at(99.9),
    mean: round(sorted.reduce((sum, v) => sum + v, 0) / Math.max(1, sorted.length)),
    max: round(sorted.at(-1) ?? 0),
  };
}

export function compareLatency(
  name: string,
  description: string,
  off: readonly number[],
  on: readonly number[],
): LatencyComparison {
  const a = summarizeLatency(off);
  const b = summarizeLatency(on);
  return {
    name,
    description,
    off: a,
    on: b,
    added: {
      p50: round(b.p50 - a.p50),
      p90: round(b.p90 - a.p90),
      p99: round(b.p99 - a.p99),
      mean: round(b.mean - a.mean),
    },
  };
}
