/**
 * The shapes of the trace-context seam (docs/architecture.md rule 8), apart from the seam itself
 * (trace-context.ts) so that a propagator (telemetry/event-propagator.ts) implements them
 * without importing the seam that installs it.
 */

/** W3C Trace Context headers (https://www.w3.org/TR/trace-context/). Baggage is not carried. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** What a consumer-side propagator knows about the job it is about to run. */
export interface TracedJobInfo {
  queue: string;
  jobName: string;
  jobId: string;
  attempt: number;
  /**
   * True for fan-out deliveries (one event → a job per consumer group): the consumer span
   * should *link* to the producer's context rather than become its child.
   */
  link: boolean;
}

export interface TracePropagator {
  /** Writes the active context into `carrier` (producer side: appendEvent, publish). */
  inject(carrier: TraceCarrier): void;
  /** Runs `work` inside a consumer span continued from, or linked to, `carrier`. */
  run<T>(carrier: TraceCarrier | undefined, job: TracedJobInfo, work: () => Promise<T>): Promise<T>;
}
