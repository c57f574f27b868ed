import {
  addressVariable,
  createEventBus,
  loadConfig,
  createPool,
  recordBuildInfo,
  startAdminServer,
  type EventBus,
  type Logger,
  type Pool,
  type RunningAdminServer,
  type ComponentDeclaration,
  type RunningComponent,
} from "@switchboard/kit";
import { loadGatewayConfig, startGateway, type RunningGateway } from "@switchboard/gateway";
import { serviceComponents } from "./components.js";

export interface PlatformOptions {
  databaseUrl: string;
  /** Unset → in-process queue and rate-limit stores. */
  redisUrl?: string | undefined;
  /** Redis key prefix of the queues (tests isolate themselves with a random one). */
  busPrefix?: string;
  logger: Logger;
  /** The gateway's environment (PORT, PUBLIC_URL, BOOTSTRAP_*…); addresses are added. */
  gatewayEnv: NodeJS.ProcessEnv;
  /** The services' environment (settings such as SANDBOX_CALL_SECONDS); default process.env. */
  serviceEnv?: NodeJS.ProcessEnv;
  /** Runs after the services start and before the gateway does (e.g. seeding). */
  beforeGateway?: (pools: Record<string, Pool>) => Promise<void>;
  /**
   * One admin port for the whole process (/metrics, /livez, /readyz — readiness is the
   * gateway's, which covers every service); port 0 picks a free one. Started first.
   */
  admin?: { port: number; host?: string; whenTaken?: "fail" | "any" };
}

export interface RunningPlatform {
  gateway: RunningGateway;
  bus: EventBus;
  pools: Record<string, Pool>;
  services: Record<string, RunningComponent>;
  /** The admin server, when `admin` was given. */
  admin: RunningAdminServer | undefined;
  /** The gateway's resolved environment, backend addresses included (for more replicas). */
  gatewayEnv: NodeJS.ProcessEnv;
  /** Stops one service (to test an unavailable backend). */
  stopService(name: string): Promise<void>;
  /** Starts a stopped service again on its old port. */
  restartService(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts every backend service and the gateway against one database, each service with its
 * own pool and schema, on loopback gRPC sockets. The embedded mode and the tests use this.
 */
export async function startPlatform(options: PlatformOptions): Promise<RunningPlatform> {
  const { logger } = options;
  const admin = options.admin
    ? await startAdminServer({
        host: options.admin.host ?? "127.0.0.1",
        port: options.admin.port,
        ...(options.admin.whenTaken ? { whenTaken: options.admin.whenTaken } : {}),
        logger,
      })
    : undefined;
  const bus = createEventBus({
    redisUrl: options.redisUrl,
    logger,
    ...(options.busPrefix ? { prefix: options.busPrefix } : {}),
  });
  const pools: Record<string, Pool> = {};
  const services: Record<string, RunningComponent> = {};
  const stopped = new Set<string>();
  const addresses: Record<string, string> = {};
  const env = options.serviceEnv ?? process.env;
  const start = (component: ComponentDeclaration, port: number) =>
    component.start(
      {
        pool: pools[component.name]!,
        bus,
        logger,
        host: "127.0.0.1",
        port,
        addresses,
        ownProcess: false,
        ...(options.redisUrl
          ? { redis: { url: options.redisUrl, prefix: options.busPrefix ?? "sb" } }
          : {}),
      },
      loadConfig(component.settings, env),
    );
  for (const component of serviceComponents) {
    pools[component.name] = createPool(options.databaseUrl, { name: component.name, max: 8 });
    const running = await start(component, 0);
    services[component.name] = running;
    recordBuildInfo(component.name);
    addresses[component.name] = `127.0.0.1:${running.port}`;
  }
  await options.beforeGateway?.(pools);
  const gatewayEnv: NodeJS.ProcessEnv = {
    ...options.gatewayEnv,
    ...Object.fromEntries(
      Object.entries(addresses).map(([name, address]) => [addressVariable(name), address]),
    ),
    DATABASE_URL: options.databaseUrl,
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
  };
  const config = loadGatewayConfig(gatewayEnv);
  const gateway = await startGateway({ config, logger, bus });
  recordBuildInfo("gateway");
  admin?.setReady(() => gateway.readiness());

  const stopService = async (name: string) => {
    if (stopped.has(name)) return;
    stopped.add(name);
    await services[name]?.stop();
  };
  const restartService = async (name: string) => {
    const component = serviceComponents.find((c) => c.name === name);
    const previous = services[name];
    if (!component || !previous || !stopped.has(name)) return;
    services[name] = await start(component, previous.port);
    stopped.delete(name);
  };
  return {
    gateway,
    bus,
    pools,
    services,
    admin,
    gatewayEnv,
    stopService,
    restartService,
    stop: async () => {
      admin?.markShuttingDown();
      await gateway.stop();
      for (const component of [...serviceComponents].reverse()) await stopService(component.name);
      await bus.close();
      await Promise.all(Object.values(pools).map((pool) => pool.end()));
      await admin?.close();
    },
  };
}
