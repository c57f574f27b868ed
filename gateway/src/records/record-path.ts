import type { NextFunction, Request, RequestHandler, Response } from "express";
import { DomainError, trackRecordBacklog, type Logger, type Queryable } from "@switchboard/kit";
import type { Stage } from "../http/pipeline.js";
import { PROBLEM_MEDIA_TYPE, toProblem } from "../http/problem.js";
import type { IdempotencyStore } from "../policies/idempotency-store.js";
import { RecordRelay } from "./record-relay.js";
import { ReplyCommitter } from "./reply-committer.js";
import { requestRecord, resourceIdIn } from "./request-record.js";
import type { usage } from "@switchboard/proto";

/**
 * The first stage of every routed request: notes the route template and the id its path names,
 * and, once the inner stages have run (or thrown), the verified principal — for the record.
 */
export const recordStage: Stage = async (exchange, next) => {
  const { res, req, route } = exchange;
  res.locals.usageRoute = route.path;
  if (route.answersWithoutRecord) res.locals.answersWithoutRecord = true;
  const resourceId = resourceIdIn(req.params as Record<string, unknown>);
  if (resourceId) res.locals.usageResourceId = resourceId;
  try {
    return await next();
  } finally {
    res.locals.usagePrincipal = exchange.principal;
  }
};

/** Headers of the first reply that do not belong on the 503 that replaces it. */
const replacedHeaders = [
  "content-type",
  "content-length",
  "location",
  "etag",
  "idempotent-replayed",
];

/**
 * Express middleware, mounted first: when a reply is ended — whatever produced it (a route, a
 * problem, 404, 405, 429, a replay) — its api.request record and, for a keyed request, the
 * answer its retries will get are committed (group commit), and only then do the reply's bytes
 * go out. What cannot be committed in time makes the reply 503 with Retry-After: no answered
 * request without its record, no answer its retry would not get.
 */
export function replyCommitMiddleware(options: {
  committer: ReplyCommitter;
  /** Unset: records are off (only answers are committed). */
  records: { platformAccount: string } | undefined;
  errorsUrl: string;
  logger: Logger;
}): RequestHandler {
  const { committer, records, logger } = options;
  return (req: Request, res: Response, next: NextFunction) => {
    const arrivedAt = Date.now();
    const end = res.end;
    let ending = false;
    res.end = function commitThenEnd(this: Response, ...args: unknown[]) {
      const send = (...sent: unknown[]) => {
        try {
          end.apply(this, sent as Parameters<Response["end"]>);
        } catch (error) {
          logger.error({ err: error, requestId: req.requestId }, "reply could not be sent");
        }
      };
      if (ending) return end.apply(this, args as Parameters<Response["end"]>);
      ending = true;
      const kept = res.locals.keptAnswer;
      const record = records
        ? requestRecord(req, res, { arrivedAt, platformAccount: records.platformAccount })
        : undefined;
      if (!kept && !record) return end.apply(this, args as Parameters<Response["end"]>);
      committer
        .commit({ ...(record ? { record } : {}), ...(kept ? { completion: kept.completion } : {}) })
        .then(
          (stored) => {
            kept?.committed(stored);
            send(...args);
          },
          (error: unknown) => {
            kept?.failed(error);
            logger.error({ err: error, requestId: req.requestId }, "reply not committed: 503");
            if (res.headersSent || (res.locals.answersWithoutRecord && !kept)) return send(...args);
            const problem = toProblem(
              new DomainError(
                "service-unavailable",
                "the request's record could not be stored; retry",
                {
                  retryAfter: 1,
                },
              ),
              { requestId: req.requestId, errorsUrl: options.errorsUrl },
            );
            for (const name of replacedHeaders) res.removeHeader(name);
            res.statusCode = problem.status;
            res.set(problem.headers).type(PROBLEM_MEDIA_TYPE);
            const body = JSON.stringify(problem.body);
            res.setHeader("content-length", Buffer.byteLength(body));
            send(req.method === "HEAD" ? undefined : body);
          },
        );
      return this;
    } as Response["end"];
    next();
  };
}

export interface RecordPathOptions {
  /** The gateway's pool (its schema holds the record outbox and the Idempotency-Key store). */
  db: Queryable;
  store: IdempotencyStore;
  /** Hands a batch of records to the usage ledger (AppendRequestRecords). */
  append: (records: usage.RequestRecord[]) => Promise<void>;
  logger: Logger;
  errorsUrl: string;
  /** Undefined: records are off (never in production); answers are still committed first. */
  records: { platformAccount: string } | undefined;
  /** How long a reply waits for a database that is down before it becomes 503. */
  commitBudgetMs: number;
}

export interface RecordPath {
  /** Mount first (after the request id is minted). */
  middleware: RequestHandler;
  /** Run first among the stages. */
  stage: Stage;
  /** Records committed here and not yet relayed by this process. */
  backlog(): number;
  /** The reply commits made and the records they stored. */
  stats(): { batches: number; records: number };
  /** Waits for the commits in flight, then hands over what is due. */
  close(): Promise<void>;
}

/**
 * The gateway's side of the usage ledger: each reply's record committed to the gateway's
 * record outbox (PostgreSQL) before the reply is sent, relayed to the usage service in batches.
 */
export function createRecordPath(options: RecordPathOptions): RecordPath {
  const relay = new RecordRelay({ db: options.db, append: options.append, logger: options.logger });
  const committer = new ReplyCommitter({
    db: options.db,
    store: options.store,
    logger: options.logger,
    budgetMs: options.commitBudgetMs,
    recordLeaseSeconds: relay.leaseSeconds,
    onRecords: (records) => relay.committed(records),
  });
  if (options.records) relay.start();
  const untrack = trackRecordBacklog(() => relay.backlog);
  return {
    middleware: replyCommitMiddleware({
      committer,
      records: options.records,
      errorsUrl: options.errorsUrl,
      logger: options.logger,
    }),
    stage: recordStage,
    backlog: () => relay.backlog,
    stats: () => ({ ...committer.stats }),
    close: async () => {
      await committer.drained();
      await relay.stop();
      untrack();
    },
  };
}
