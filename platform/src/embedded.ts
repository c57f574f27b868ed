import { join } from "node:path";
import { createLogger, onShutdown, startEmbeddedPostgres } from "@switchboard/kit";
import { inventoryCount, seedInventory } from "@switchboard/inventory";
import { banner } from "./banner.js";
import { startPlatform } from "./compose.js";
import { bootstrapCredentials, dataDirFrom, ensureDir, writeRuntime } from "./data-dir.js";

/**
 * The embedded mode: every component in one process on PGlite served over the Postgres wire
 * protocol, the same gRPC servers on real loopback sockets, the same SQL as the mesh mode.
 */
const logger = createLogger("switchboard");
const dataDir = dataDirFrom();
ensureDir(dataDir);
const seedCount = Number(process.env.EMBEDDED_SEED_COUNT ?? 50_000);
const creds = bootstrapCredentials(dataDir, process.env);

const postgres = await startEmbeddedPostgres({ dataDir: join(dataDir, "pgdata") });
let numbers = 0;
const platform = await startPlatform({
  databaseUrl: postgres.url,
  redisUrl: process.env.REDIS_URL || undefined,
  logger,
  gatewayEnv: {
    ...process.env,
    HOST: process.env.HOST ?? "127.0.0.1",
    BOOTSTRAP_ACCOUNT: creds.accountId,
    BOOTSTRAP_CLIENT_ID: creds.clientId,
    BOOTSTRAP_CLIENT_SECRET: creds.clientSecret,
  },
  beforeGateway: async (pools) => {
    const pool = pools.inventory!;
    numbers = await inventoryCount(pool);
    if (numbers === 0) {
      logger.info({ count: seedCount }, "seeding the demo inventory (first start)");
      numbers = await seedInventory(pool, { count: seedCount, seed: 1 });
    }
  },
});
const publicUrl = platform.gateway.publicUrl;
writeRuntime(dataDir, { databaseUrl: postgres.url, gatewayUrl: publicUrl, pid: process.pid });
process.stdout.write(banner(publicUrl, creds, numbers));

onShutdown(logger, async () => {
  await platform.stop();
  await postgres.stop();
});
