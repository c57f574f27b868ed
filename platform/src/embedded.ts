import { join } from "node:path";
import {
  createLogger,
  loadAdminAddress,
  loadConfig,
  onShutdown,
  startEmbeddedPostgres,
  traceExportRequested,
} from "@switchboard/kit";
import { inventoryCount, seedInventory } from "@switchboard/inventory";
import { banner } from "./banner.js";
import { startPlatform } from "./compose.js";
import { embeddedSettings } from "./embedded-settings.js";
import {
  bootstrapCredentials,
  dataDirFrom,
  ensureDir,
  internalSecretOf,
  writeRuntime,
} from "./data-dir.js";
import { dataDirSigningKeySecret, resealDatabase } from "./signing-key-secret.js";

/**
 * The embedded mode: every component in one process on PGlite served over the Postgres wire
 * protocol, the same gRPC servers on real loopback sockets, the same SQL as the mesh mode.
 */
// Tracing is opt-in here (an OTLP endpoint or OTEL_TRACES_EXPORTER); for pg and Redis spans too,
// start with `node --import @switchboard/kit/telemetry/register platform/dist/embedded.js`.
if (traceExportRequested()) await import("@switchboard/kit/telemetry/register");
const logger = createLogger("switchboard");
const dataDir = dataDirFrom();
ensureDir(dataDir);
const seedCount = loadConfig(embeddedSettings).EMBEDDED_SEED_COUNT;
const creds = bootstrapCredentials(dataDir, process.env);
// Signs the gRPC calls between the components and the cursors; kept so cursors outlive a restart.
process.env.INTERNAL_SECRET ||= internalSecretOf(dataDir);

// On a Unix socket in the data dir (0700), on no TCP port: PGlite accepts any user and password.
const postgres = await startEmbeddedPostgres({
  dataDir: join(dataDir, "pgdata"),
  socketDir: dataDir,
});
// Seals signing keys, webhook secrets and stored responses at rest; kept beside the database.
process.env.SIGNING_KEY_SECRET = await dataDirSigningKeySecret(
  dataDir,
  process.env,
  resealDatabase(postgres.url),
  logger,
);
let numbers = 0;
const platform = await startPlatform({
  databaseUrl: postgres.url,
  redisUrl: process.env.REDIS_URL || undefined,
  logger,
  // One admin port (/metrics, /livez, /readyz) for the whole process, on loopback by default.
  // 9090 is also Prometheus's default: when it is taken the platform goes on on a free port.
  admin: { ...loadAdminAddress({ port: 9090, host: "127.0.0.1" }), whenTaken: "any" },
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
process.stdout.write(banner(publicUrl, creds, numbers, { adminUrl: platform.admin?.url ?? "" }));

onShutdown(logger, async () => {
  await platform.stop();
  await postgres.stop();
});
