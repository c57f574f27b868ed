import type { Client } from "@grpc/grpc-js";
import {
  createSmoke,
  smokeFactPublisher,
  type Smoke,
  type SmokeBackend,
} from "@switchboard/agent-smoke";
import { isDatabaseReady, type EventBus, type Logger, type Pool } from "@switchboard/kit";
import { call, type Backend, type Backends } from "../backends.js";
import type { GatewayConfig } from "../config.js";
import type { ExtraCheck } from "../health.js";
import { recordVerifier } from "./record-signature.js";

/** A backend as the smoke calls it: the gateway's own backend call (deadline, request id, key). */
const smokeBackend = <C extends Client>(backend: Backend<C>): SmokeBackend<C> => ({
  call: (method, request, options) => call(backend, method, request, options),
});

/**
 * The gateway's smoke (@switchboard/agent-smoke, mounted as POST /api/agent/smoke): the ports it
 * runs on, built from the gateway's backends, settings, own stores and the queue of its usage fact.
 */
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
  const { config, backends, logger } = options;
  return createSmoke({
    backends: {
      inventory: smokeBackend(backends.inventory),
      callControl: smokeBackend(backends.callControl),
      messaging: smokeBackend(backends.messaging),
      webhook: smokeBackend(backends.webhook),
      usage: smokeBackend(backends.usage),
    },
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
    verifyRecords: recordVerifier,
    publishFact: smokeFactPublisher({
      bus: options.bus,
      logger,
      timeoutMs: config.usageRecords.timeoutMs,
    }),
    logger,
  });
}
