import type pg from "pg";
import {
  appendEvent,
  onOutboxCommitted,
  platformConsumerGroups,
  startOutboxRelay,
  type Backoff,
  type ConsumerGroup,
  type EventBus,
  type Logger,
  type OutboxRelay,
  type Pool,
} from "@switchboard/kit";

export const SCHEMA = "messaging";

/**
 * The group that delivers `message.queued` to the dispatcher (delivery/dispatcher.ts). Its
 * tries and backoff are the send's own (the dispatcher submits at once when the sender's pace
 * allows), so they come from the configuration.
 */
export const DISPATCH_GROUP = "messaging-dispatch";

export const dispatchGroup = (retry: { attempts: number; backoff: Backoff }): ConsumerGroup => ({
  name: DISPATCH_GROUP,
  types: ["message.queued"],
  attempts: retry.attempts,
  backoff: retry.backoff,
});

export type MessagingEventType =
  | "message.queued"
  | "message.sending"
  | "message.sent"
  | "message.delivered"
  | "message.undelivered"
  | "message.failed"
  | "message.expired"
  | "message.read"
  | "message.received"
  | "consent.granted"
  | "consent.revoked"
  | "template.approved";

export interface MessagingEvent {
  type: MessagingEventType;
  accountId: string;
  resourceId: string;
  data: Record<string, unknown>;
}

/**
 * The service's transactional outbox. `append` MUST run on the client of the transaction that
 * makes the state change; `wake` (after commit) starts a relay within `coalesceMs`, so a
 * burst of commits is relayed in one batch (one transaction) rather than one each. Appends do
 * not NOTIFY: thousands of sends a second would serialise on the notify lock, so the relays are
 * woken in process and poll as the floor (other replicas' events wait at most one poll).
 */
export interface Outbox {
  append(client: pg.ClientBase, event: MessagingEvent): Promise<void>;
  wake(): void;
  stop(): Promise<void>;
}

export function startOutbox(options: {
  pool: Pool;
  bus: EventBus;
  logger: Logger;
  relays: number;
  pollIntervalMs: number;
  /** How long a wake waits for more commits to join the batch (default 20 ms). */
  coalesceMs?: number;
  /** The send's tries and backoff (see dispatchGroup). */
  sendRetry: { attempts: number; backoff: Backoff };
}): Outbox {
  const coalesceMs = options.coalesceMs ?? 20;
  let wakeTimer: NodeJS.Timeout | undefined;
  // Several relays share the work: each batch takes rows FOR UPDATE SKIP LOCKED.
  const relays: OutboxRelay[] = Array.from({ length: Math.max(1, options.relays) }, () =>
    startOutboxRelay({
      pool: options.pool,
      schema: SCHEMA,
      bus: options.bus,
      logger: options.logger,
      groups: [...platformConsumerGroups, dispatchGroup(options.sendRetry)],
      batchSize: 200,
      pollIntervalMs: options.pollIntervalMs,
      listen: false,
      wakeOnCommit: false,
    }),
  );
  // One relay per wake, in turn: the others would find the batch taken (an empty commit each).
  let next = 0;
  const wake = () => {
    if (wakeTimer) return;
    wakeTimer = setTimeout(() => {
      wakeTimer = undefined;
      relays[next]?.wake();
      next = (next + 1) % relays.length;
    }, coalesceMs);
    wakeTimer.unref();
  };
  // Commits that appended wake the relays through the same coalescing timer, once per batch.
  const unregister = onOutboxCommitted(SCHEMA, wake);
  return {
    append: async (client, event) => {
      await appendEvent(client, SCHEMA, event, { notify: false });
    },
    wake,
    stop: async () => {
      unregister();
      clearTimeout(wakeTimer);
      await Promise.all(relays.map((relay) => relay.stop()));
    },
  };
}
