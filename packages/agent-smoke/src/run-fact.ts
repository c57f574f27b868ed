import {
  newId,
  platformConsumerGroups,
  publishEvent,
  type EventBus,
  type EventEnvelope,
  type Logger,
} from "@switchboard/kit";

export interface SmokeRunFact {
  smokeId: string;
  accountId: string;
  principal: string;
  requestId: string;
  status: "pass" | "fail";
  startedAt: string;
  durationMs: number;
}

export type SmokeFactPublisher = (fact: SmokeRunFact) => Promise<void>;

const usageGroup = platformConsumerGroups.find((group) => group.name === "usage")!;

/**
 * The `smoke.run` usage fact, one per run, published to the usage ledger's consumer group on
 * the queue the gateway's api.request records travel (the gateway has no outbox of its own):
 * the event id dedupes a republish and the usage service signs and stores it like any fact.
 * The reply waits for the hand-off up to `timeoutMs`; past that it goes out and the publish
 * carries on. Without a queue (records off) there is nowhere to put it: it is logged.
 */
export function smokeFactPublisher(options: {
  bus: EventBus | undefined;
  logger: Logger;
  timeoutMs: number;
}): SmokeFactPublisher {
  const { bus, logger } = options;
  return async (fact) => {
    if (!bus) {
      logger.warn({ smokeId: fact.smokeId }, "no queue for the smoke.run usage fact");
      return;
    }
    const event: EventEnvelope<Record<string, unknown>> = {
      id: newId("evt"),
      type: "smoke.run",
      timestamp: new Date(Date.parse(fact.startedAt) + fact.durationMs).toISOString(),
      account_id: fact.accountId,
      resource_id: fact.smokeId,
      sequence: 1,
      data: {
        smoke_id: fact.smokeId,
        status: fact.status,
        duration_ms: fact.durationMs,
        request_id: fact.requestId,
        principal: fact.principal,
      },
    };
    const published = publishEvent(bus, usageGroup, event).catch((error: unknown) => {
      logger.error({ err: error, smokeId: fact.smokeId }, "the smoke.run fact was not queued");
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      published,
      new Promise((resolve) => (timer = setTimeout(resolve, options.timeoutMs))),
    ]);
    clearTimeout(timer);
  };
}
