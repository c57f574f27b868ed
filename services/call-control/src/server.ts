import {
  type EventBus,
  type Logger,
  type Pool,
  type RunningService,
  SigningKeyStore,
  startGrpcServer,
  startOutboxRelay,
  startServiceHealth,
  trackLiveCalls,
} from "@switchboard/kit";
import { createCallEngine, type CallEngine } from "./calls/call-engine.js";
import { drainLiveCalls } from "./calls/call-drain.js";
import { callRelayGroups, callSchema } from "./calls/call-events.js";
import { recoverOrphanedCalls } from "./calls/recovery.js";
import { createCarrier } from "./carrier/create-carrier.js";
import type { InboundDelivery } from "./carrier/sip/sip-inbound.js";
import { receiveInboundCall } from "./calls/inbound.js";
import type { CallControlSettings } from "./config.js";
import { connectInventory } from "./inventory-directory.js";
import { migrateCallControl } from "./migrations.js";
import { createActionRunner, type ActionRunner } from "./scheduler/action-runner.js";
import { createCallControlService } from "./service.js";
import { startSip, type RunningSip } from "./sip/sip-service.js";
import { passportPurpose, StirCertificates } from "./stir-shaken/certificate.js";
import { PassportSigner } from "./stir-shaken/passport.js";

export interface CallControlOptions {
  pool: Pool;
  bus: EventBus;
  port: number;
  host?: string;
  logger: Logger;
  /** The inventory's gRPC address (caller ids, route numbers and DIDs are checked there). */
  inventoryAddress: string;
  settings: CallControlSettings;
}

export interface RunningCallControl extends RunningService {
  engine: CallEngine;
  /** The durable timers (tests drain them). */
  timers: ActionRunner;
  /** The SIP endpoint and registrar, when SIP_LISTEN is set. */
  sip: RunningSip | undefined;
  /**
   * Drains gRPC (no new calls) and SIP (OPTIONS answered 503, so a SIP edge takes this replica
   * out), lets the calls live by then run on here for up to `callDrainMs` (default 0: none), then
   * stops the timers, the SIP listener and the relay. The pool stays open (the caller owns it).
   */
  stop(options?: { callDrainMs?: number }): Promise<void>;
}

/**
 * Migrates, makes sure the PASSporT key and its certificate exist, recovers calls left live by
 * a previous process, then starts the durable timers, the outbox relay and the gRPC server
 * (CallControlService with grpc.health.v1).
 */
export async function startCallControl(options: CallControlOptions): Promise<RunningCallControl> {
  const { pool, logger, settings } = options;
  await migrateCallControl(pool);
  const keys = new SigningKeyStore({
    pool,
    schema: callSchema,
    secret: settings.signingKeySecret,
    purposes: [passportPurpose],
    algorithms: { [passportPurpose]: "ES256" },
    logger,
  });
  await keys.init();
  const certificates = new StirCertificates(pool, keys, settings.serviceProviderCode);
  await certificates.active();
  // First of what listens or runs: a SIP address already taken fails the start with nothing to undo.
  const sip = await startSip({ pool, logger, settings: settings.sip });

  const directory = connectInventory(options.inventoryAddress, {
    deadlineMs: settings.inventoryDeadlineMs,
    logger,
  });
  const timers = createActionRunner({
    pool,
    logger,
    pollIntervalMs: settings.timers.pollIntervalMs,
    batchSize: settings.timers.batchSize,
  });
  // An INVITE to a DID is delivered once the engine exists (the carrier is created first).
  const inbound: { engine?: CallEngine } = {};
  const delivery: InboundDelivery = {
    ownerOf: (e164) => directory.ownerOf(e164),
    receive: (call, onRinging) => {
      if (!inbound.engine) throw new Error("call-control is starting");
      return receiveInboundCall(
        {
          engine: inbound.engine,
          directory,
          ringTimeoutSeconds: settings.inboundRingTimeoutSeconds,
        },
        call,
        onRinging,
      );
    },
  };
  const carrier = createCarrier(settings, { sip, delivery, logger });
  const engine = createCallEngine({ pool, runner: timers, carrier, logger });
  inbound.engine = engine;
  await recoverOrphanedCalls({ pool, engine, logger });
  timers.start();
  const relay = startOutboxRelay({
    pool,
    schema: callSchema,
    bus: options.bus,
    logger,
    groups: callRelayGroups,
    listen: false,
    pollIntervalMs: 100,
    coalesceMs: 20,
  });

  const server = await startGrpcServer({
    name: "call-control",
    services: [
      createCallControlService({
        pool,
        logger,
        engine,
        directory,
        signer: new PassportSigner(keys),
        certificates,
        certificateUrl: settings.certificateUrl,
        inboundRingTimeoutSeconds: settings.inboundRingTimeoutSeconds,
        sipDomain: settings.sip.domain,
      }),
    ],
    ...(options.host !== undefined ? { host: options.host } : {}),
    port: options.port,
    logger,
  });
  const health = await startServiceHealth({ server, pool, bus: options.bus, logger });
  const untrackCalls = trackLiveCalls(async () => {
    const { rows } = await pool.query<{ live: number }>(
      `SELECT count(*)::int AS live FROM call_control.calls
        WHERE status IN ('queued', 'initiated', 'ringing', 'in_progress')`,
    );
    return rows[0]?.live ?? 0;
  });
  logger.info({ carrier: carrier.name }, "call-control ready");
  return {
    port: server.port,
    server,
    health,
    engine,
    timers,
    sip,
    stop: async ({ callDrainMs = 0 } = {}) => {
      health.stop();
      // A SIP edge's OPTIONS probes now get 503: it sends this replica nothing new while the
      // calls here finish (Retry-After: the drain window, after which this process is gone).
      sip?.endpoint.drain(Math.max(1, Math.ceil(callDrainMs / 1000)));
      untrackCalls();
      await server.drain();
      await drainLiveCalls({ pool, logger, windowMs: callDrainMs }).catch((error: unknown) =>
        logger.warn({ err: error }, "draining: could not follow the live calls"),
      );
      await timers.stop();
      // The SIP listener lives as long as the calls here may still send or hear a packet.
      await sip?.stop();
      await relay.stop();
      await carrier.stop();
      directory.close();
    },
  };
}
