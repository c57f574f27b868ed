import { isDatabaseReady, type EventBus, type Logger, type Pool } from "@switchboard/kit";
import type { Backends } from "../backends.js";
import type { GatewayConfig } from "../config.js";
import type { ExtraCheck } from "../health.js";
import { smokeFactPublisher } from "./run-fact.js";
import { createSmoke, type Smoke } from "./smoke.js";

/** The gateway's smoke: its backends, settings, own stores and the queue of its usage fact. */
export function gatewaySmoke(options: {
  config: GatewayConfig;
  backends: Backends;
  pool: Pool;
  /** The traffic policies' checks (redis when configured). */
  checks: Record<string, ExtraCheck>;
  /** The platform's event queue (the smoke.run fact); undefined: none configured. */
  bus: EventBus | undefined;
  logger: Logger;
}): Smoke {
  const { config, logger } = options;
  return createSmoke({
    backends: options.backends,
    settings: config.smoke,
    grpcDeadlineMs: config.grpcDeadlineMs,
    carriers: config.carriers,
    gatewayChecks: {
      postgres: () =>
        isDatabaseReady(options.pool, config.smoke.stepTimeoutMs).then((ready) =>
          ready ? "pass" : "warn",
        ),
      ...options.checks,
    },
    recordsOn: config.usageRecords.enabled,
    publishFact: smokeFactPublisher({
      bus: options.bus,
      logger,
      timeoutMs: config.usageRecords.timeoutMs,
    }),
    logger,
  });
}
