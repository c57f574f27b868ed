import { createEventBus, type EventBus, type Logger } from "@switchboard/kit";
import { createRecordPath, type RecordPath } from "./record-path.js";

export interface RecordSettings {
  enabled: boolean;
  timeoutMs: number;
  platformAccount: string;
  /** Key prefix of the queues on Redis; the usage service must use the same. */
  queuePrefix: string;
}

export interface StartedRecordPath {
  /** Undefined when the record path is off (never in production). */
  path: RecordPath | undefined;
  /** The queue the records travel (also the smoke.run fact's); undefined when off. */
  bus: EventBus | undefined;
  /** Hands off what is left, then closes the bus if this gateway opened it. */
  close(): Promise<void>;
}

/**
 * The record path on the platform's queue: the bus the composition shares (embedded mode and
 * tests), else BullMQ on REDIS_URL (mesh). Without either there is nowhere durable to put
 * records: production refuses to start, elsewhere the gateway runs without them and says so.
 */
export function startRecordPath(options: {
  settings: RecordSettings;
  bus: EventBus | undefined;
  redisUrl: string | undefined;
  production: boolean;
  logger: Logger;
}): StartedRecordPath {
  const { settings, logger, production } = options;
  if (!settings.enabled) {
    if (production) throw new Error("USAGE_RECORDS cannot be turned off in production");
    logger.warn("usage records are off (USAGE_RECORDS=false): replies land no api.request record");
    return { path: undefined, bus: undefined, close: async () => undefined };
  }
  const ownBus =
    options.bus === undefined && options.redisUrl
      ? createEventBus({ redisUrl: options.redisUrl, logger, prefix: settings.queuePrefix })
      : undefined;
  const bus = options.bus ?? ownBus;
  if (!bus) {
    if (production) throw new Error("usage records need a queue: set REDIS_URL");
    logger.warn("usage records are off: no REDIS_URL and no shared event bus");
    return { path: undefined, bus: undefined, close: async () => undefined };
  }
  const path = createRecordPath({
    bus,
    logger,
    platformAccount: settings.platformAccount,
    timeoutMs: settings.timeoutMs,
  });
  return {
    path,
    bus,
    close: async () => {
      await path.close();
      await ownBus?.close();
    },
  };
}
