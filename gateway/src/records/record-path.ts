import type { NextFunction, Request, RequestHandler, Response } from "express";
import { trackRecordBacklog, usageRecordQueue, type EventBus, type Logger } from "@switchboard/kit";
import { usage } from "@switchboard/proto";
import type { Stage } from "../http/pipeline.js";
import { RecordPublisher, type RecordPublisherStats, type RecordSink } from "./record-publisher.js";
import { requestRecord, resourceIdIn } from "./request-record.js";

/**
 * Retries of a `usage.records` job in the usage service (a database outage, a crash mid-write):
 * exponential from 0.5 s to 1 min, about 16 hours in all before it lands in the failed set.
 */
const recordJobRetry = {
  attempts: 1_000,
  backoff: { type: "exponential", delayMs: 500, maxDelayMs: 60_000, jitter: 0.2 },
} as const;

/** Publishes a batch as one `usage.records` job whose id is the batch id (dedupe on retry). */
export function busRecordSink(bus: EventBus): RecordSink {
  return async (records, batchId) => {
    await bus.publish(
      usageRecordQueue,
      { name: "api.request", data: usage.RequestRecordBatch.toJSON({ records }) },
      { jobId: batchId, ...recordJobRetry },
    );
  };
}

/**
 * The first stage of every routed request: notes the route template and the id its path names,
 * and, once the inner stages have run (or thrown), the verified principal — for the record.
 */
export const recordStage: Stage = async (exchange, next) => {
  const { res, req, route } = exchange;
  res.locals.usageRoute = route.path;
  const resourceId = resourceIdIn(req.params as Record<string, unknown>);
  if (resourceId) res.locals.usageResourceId = resourceId;
  try {
    return await next();
  } finally {
    res.locals.usagePrincipal = exchange.principal;
  }
};

/**
 * Express middleware, mounted first: when the reply is ended — whatever produced it (a route, a
 * problem, 404, 405, 429, a replay) — its api.request record is handed to the publisher and the
 * reply's bytes go out only once the record is in the queue.
 */
export function recordMiddleware(
  publisher: RecordPublisher,
  options: { platformAccount: string; logger: Logger },
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const arrivedAt = Date.now();
    const end = res.end;
    let recorded = false;
    res.end = function recordThenEnd(this: Response, ...args: unknown[]) {
      if (recorded) return end.apply(this, args as Parameters<Response["end"]>);
      recorded = true;
      const record = requestRecord(req, res, {
        arrivedAt,
        platformAccount: options.platformAccount,
      });
      void publisher.record(record).then(() => {
        try {
          end.apply(this, args as Parameters<Response["end"]>);
        } catch (error) {
          options.logger.error({ err: error, requestId: req.requestId }, "reply could not be sent");
        }
      });
      return this;
    } as Response["end"];
    next();
  };
}

export interface RecordPathOptions {
  bus: EventBus;
  logger: Logger;
  /** The account of public and unauthenticated requests. */
  platformAccount: string;
  /** How long a reply waits for its record's hand-off before going out anyway. */
  timeoutMs: number;
}

export interface RecordPath {
  /** Mount first (after the request id is minted). */
  middleware: RequestHandler;
  /** Run first among the stages. */
  stage: Stage;
  stats(): RecordPublisherStats & { backlog: number };
  /** Hands off what is left (up to `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

/** The gateway side of the usage ledger: one api.request record per reply, queued before it is sent. */
export function createRecordPath(options: RecordPathOptions): RecordPath {
  const publisher = new RecordPublisher({
    sink: busRecordSink(options.bus),
    logger: options.logger,
    timeoutMs: options.timeoutMs,
  });
  const untrack = trackRecordBacklog(() => publisher.backlog);
  return {
    middleware: recordMiddleware(publisher, {
      platformAccount: options.platformAccount,
      logger: options.logger,
    }),
    stage: recordStage,
    stats: () => ({ ...publisher.stats, backlog: publisher.backlog }),
    close: async (graceMs) => {
      await publisher.close(graceMs);
      untrack();
    },
  };
}
