import type pg from "pg";
import type { Logger } from "pino";
import { withTransaction } from "../db.js";
import type { EventBus } from "./bus.js";
import { publishEvent, publishEventBatch, type ConsumerGroup } from "./consumer-groups.js";
import { eventTypeMatches, type EventEnvelope } from "./envelope.js";
import { outboxChannel, qualified } from "./outbox-sql.js";
import { onOutboxCommitted } from "./outbox-signal.js";
import { listenForWakeups } from "./outbox-wakeup.js";
import { sanitizeTraceCarrier } from "./trace-context.js";

export interface OutboxRelayOptions {
  pool: pg.Pool;
  /** The service's schema holding `outbox` (createOutboxTable). */
  schema: string;
  bus: EventBus;
  logger: Logger;
  /** Every consumer group that receives this service's events (see ConsumerGroup). */
  groups: readonly ConsumerGroup[];
  /** Events per transaction (default 100). */
  batchSize?: number;
  /** The polling floor after an empty batch (default 250 ms). */
  pollIntervalMs?: number;
  /**
   * While batches keep coming back empty the floor doubles up to this (default 30 s). Every
   * commit that appended to the outbox wakes this process's relays (outbox-signal.ts; NOTIFY
   * too, where on), so the floor only bounds how late another process's rows are seen when
   * that process died before relaying them. Each empty poll is a transaction: at 30 s the four
   * relays of an idle embedded platform cost a third of what they did at 10 s
   * (bench/results/idle.md).
   */
  idlePollMaxMs?: number;
  /**
   * How long a wake waits for more commits to join its batch (default 0: none) while the last
   * batch was not full. On a busy path, a batch per commit is a transaction and a job per group
   * for one or two events.
   */
  coalesceMs?: number;
  /** Wake on NOTIFY from appendEvent (default true; polling remains the floor). */
  listen?: boolean;
  /**
   * Wake when a commit in this process appended to the outbox (default true). A service that
   * batches its wake-ups registers its own with onOutboxCommitted and turns this off.
   */
  wakeOnCommit?: boolean;
}

export interface OutboxRelayStats {
  /** Events published (counting each event once, however many groups it reached). */
  published: number;
  batches: number;
  failures: number;
}

export interface OutboxRelay {
  /** Starts the next batch now (e.g. after a commit in the same process). */
  wake(): void;
  /** Counters since start, e.g. for metrics. */
  stats(): OutboxRelayStats;
  /** Stops polling; resolves once the batch in flight has finished. */
  stop(): Promise<void>;
}

interface OutboxRow {
  id: string;
  type: string;
  account_id: string;
  resource_id: string;
  sequence: number | string;
  data: Record<string, unknown>;
  trace_carrier: unknown;
  occurred_at: Date;
}

/**
 * Publishes committed, unpublished outbox events to every matching consumer group, oldest
 * first by (occurred_at, id), and marks them published: a job per event, or, to a `batched`
 * group, one job of the batch's events that it takes. Each batch is one short transaction:
 * `SELECT … FOR UPDATE SKIP LOCKED` (replicas take disjoint batches), publish, then
 * `UPDATE … SET published_at`, commit. Publishing before marking makes delivery at-least-once:
 * a crash or error in between leaves the rows unpublished and they are sent again — BullMQ
 * drops the copy while the job id (= event id) is retained, and consumers dedupe on event id.
 * A rolled-back append is never seen: only committed rows are visible to the relay.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { pool, schema, bus, logger, groups } = options;
  const batchSize = options.batchSize ?? 100;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const idlePollMaxMs = Math.max(pollIntervalMs, options.idlePollMaxMs ?? 30_000);
  const coalesceMs = Math.max(0, options.coalesceMs ?? 0);
  const outbox = qualified(schema, "outbox");
  if (groups.length === 0) throw new Error("startOutboxRelay needs at least one consumer group");
  if (!(batchSize > 0)) throw new Error("startOutboxRelay: batchSize must be positive");
  let stopping = false;
  let pendingWake = false;
  let interrupt: ((byStop: boolean) => void) | undefined;
  const stats: OutboxRelayStats = { published: 0, batches: 0, failures: 0 };

  const wake = () => {
    pendingWake = true;
    interrupt?.(false);
  };
  /** Sleeps `ms`; stop() always cuts it short, wake() only when `wakeable`. */
  const sleep = (ms: number, wakeable: boolean) =>
    new Promise<void>((resolve) => {
      if (stopping || (wakeable && pendingWake)) return resolve();
      const finish = () => {
        clearTimeout(timer);
        interrupt = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      interrupt = (byStop) => {
        if (byStop || wakeable) finish();
      };
    });

  const relayBatch = () =>
    withTransaction(pool, async (client) => {
      const { rows } = await client.query<OutboxRow>(
        `SELECT id, type, account_id, resource_id, sequence, data, trace_carrier, occurred_at
         FROM ${outbox} WHERE published_at IS NULL
         ORDER BY occurred_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [batchSize],
      );
      const events = rows.map(toEnvelope);
      const taken = (group: ConsumerGroup) =>
        events.filter((event) => eventTypeMatches(event.type, group.types));
      await Promise.all(
        groups.map((group) =>
          group.batched
            ? publishEventBatch(bus, group, taken(group))
            : Promise.all(taken(group).map((event) => publishEvent(bus, group, event))),
        ),
      );
      if (rows.length > 0) {
        await client.query(`UPDATE ${outbox} SET published_at = now() WHERE id = ANY($1::text[])`, [
          rows.map((row) => row.id),
        ]);
      }
      return rows.length;
    });

  const unregister =
    options.wakeOnCommit === false ? () => undefined : onOutboxCommitted(schema, wake);
  const listener =
    options.listen === false
      ? undefined
      : listenForWakeups(pool, outboxChannel(schema), wake, logger);

  const loop = async () => {
    let failures = 0;
    let idlePollMs = pollIntervalMs;
    let relayed = 0;
    while (!stopping) {
      if (pendingWake) {
        idlePollMs = pollIntervalMs;
        if (coalesceMs > 0 && relayed < batchSize) await sleep(coalesceMs, false);
      }
      pendingWake = false;
      relayed = 0;
      try {
        relayed = await relayBatch();
        failures = 0;
        if (relayed > 0) {
          stats.published += relayed;
          stats.batches += 1;
          logger.debug({ schema, relayed }, "outbox events published");
        }
      } catch (error) {
        failures += 1;
        stats.failures += 1;
        logger.warn({ err: error, schema, failures }, "outbox relay batch failed; will retry");
        await sleep(Math.min(pollIntervalMs * 2 ** failures, 10_000), false);
        continue;
      }
      if (relayed > 0) idlePollMs = pollIntervalMs;
      if (relayed < batchSize) {
        await sleep(idlePollMs, true);
        if (relayed === 0) idlePollMs = Math.min(idlePollMs * 2, idlePollMaxMs);
      }
    }
  };
  const running = loop();

  return {
    wake,
    stats: () => ({ ...stats }),
    async stop() {
      stopping = true;
      unregister();
      interrupt?.(true);
      await running;
      await listener?.stop();
    },
  };
}

function toEnvelope(row: OutboxRow): EventEnvelope {
  const trace = sanitizeTraceCarrier(row.trace_carrier);
  return {
    id: row.id,
    type: row.type,
    timestamp: row.occurred_at.toISOString(),
    account_id: row.account_id,
    resource_id: row.resource_id,
    sequence: Number(row.sequence),
    data: row.data,
    ...(trace ? { trace } : {}),
  };
}
