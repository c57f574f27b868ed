/**
 * The knobs of `npm run bench:messages`, from the environment (the report records them as they
 * were), and the constants the phases share.
 */
export interface MessagesBenchSettings {
  /** The messaging carriers to run, in order: `sandbox`, `smpp`. */
  carriers: string[];
  concurrency: number;
  warmup: number;
  requests: number;
  /** The sends straight to the messaging service (sandbox run only; 0 for none). */
  serviceRequests: number;
  senders: number;
  recipients: number;
  senderRate: number;
  receiptDelayMs: number;
  smppThroughput: number;
  idleSeconds: number;
  drainTimeoutMs: number;
}

export const settings: MessagesBenchSettings = {
  carriers: (process.env.BENCH_CARRIERS ?? "sandbox,smpp").split(",").map((name) => name.trim()),
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 32),
  warmup: Number(process.env.BENCH_WARMUP ?? 500),
  requests: Number(process.env.BENCH_REQUESTS ?? 5_000),
  serviceRequests: Number(process.env.BENCH_SERVICE_REQUESTS ?? 2_000),
  senders: Number(process.env.BENCH_SENDERS ?? 10),
  recipients: Number(process.env.BENCH_RECIPIENTS ?? 400),
  senderRate: Number(process.env.BENCH_SENDER_RATE ?? 10),
  receiptDelayMs: Number(process.env.BENCH_RECEIPT_DELAY_MS ?? 200),
  smppThroughput: Number(process.env.BENCH_SMPP_THROUGHPUT ?? 5_000),
  idleSeconds: Number(process.env.BENCH_IDLE_SECONDS ?? 5),
  drainTimeoutMs: Number(process.env.BENCH_DRAIN_TIMEOUT_MS ?? 300_000),
};

/** The benchmark's own pool on the platform's database (left out of the round trips). */
export const observerName = "bench-observer";

/**
 * PostgreSQL counts a backend's commits in pg_stat_database when the backend flushes its
 * statistics: at most once a second while busy, within 10 s of its going idle
 * (PGSTAT_IDLE_INTERVAL). Counts are read after this long at rest.
 */
export const statsFlushMs = 11_000;

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));
