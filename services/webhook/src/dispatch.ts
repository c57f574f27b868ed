import { sanitizeTraceCarrier, type EventBus, type TraceCarrier } from "@switchboard/kit";

/**
 * Delivery jobs on the bus (BullMQ in the mesh, in-process embedded). The database row is the
 * truth — status, attempts, the next attempt's time — and the job is its timer: the job carries
 * only the delivery id and its dispatch generation. The job id is `<delivery>.<dispatch>`, so
 * publishing a generation again while its job is queued is a no-op, and a job of an older (or
 * finished) generation finds the row moved on and does nothing.
 */
export const deliveryQueue = "webhook.deliveries";

export interface DeliveryJob {
  delivery_id: string;
  dispatch: number;
}

export interface DispatchInput {
  id: string;
  dispatch: number;
  eventType: string;
  /** The trace of the request that caused the event: the delivery span links to it. */
  trace?: unknown;
  delayMs?: number;
}

export interface Dispatcher {
  dispatch(input: DispatchInput): Promise<void>;
  dispatchAll(inputs: readonly DispatchInput[]): Promise<void>;
}

/**
 * Job attempts: one per HTTP attempt of a full schedule, plus slack for attempts that fail
 * before reaching the receiver (the database away); the row decides when a delivery is done.
 */
export const jobAttempts = (retryDelaysMs: readonly number[]): number => retryDelaysMs.length + 6;

export function createDispatcher(bus: EventBus, retryDelaysMs: readonly number[]): Dispatcher {
  const attempts = jobAttempts(retryDelaysMs);
  const dispatch = async (input: DispatchInput) => {
    const trace: TraceCarrier | undefined = sanitizeTraceCarrier(input.trace);
    await bus.publish<DeliveryJob>(
      deliveryQueue,
      {
        name: input.eventType,
        data: { delivery_id: input.id, dispatch: input.dispatch },
        ...(trace ? { trace, traceLink: true } : {}),
      },
      {
        jobId: `${input.id}.${input.dispatch}`,
        attempts,
        // The row decides; a generation's job published again after completion does nothing.
        dropWhenCompleted: true,
        ...(input.delayMs && input.delayMs > 0 ? { delay: Math.round(input.delayMs) } : {}),
      },
    );
  };
  return {
    dispatch,
    dispatchAll: async (inputs) => {
      await Promise.all(inputs.map(dispatch));
    },
  };
}
