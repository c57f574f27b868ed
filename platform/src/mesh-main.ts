import { dataDirFrom, ensureDir } from "./data-dir.js";
import { loadMeshOptions, startMesh } from "./mesh/index.js";
import { dataDirSigningKeySecret, resealDatabase } from "./signing-key-secret.js";

/**
 * `npm run mesh`: every component its own process against PostgreSQL (DATABASE_URL) and Redis
 * (REDIS_URL), addresses from the environment. SIGINT/SIGTERM drains them all and exits 0.
 */
const say = (message: string) => void process.stderr.write(`mesh | ${message}\n`);

let options;
try {
  options = loadMeshOptions();
} catch (error) {
  say((error as Error).message);
  process.exit(2);
}
// Unless the operator set one, every process seals with the data dir's SIGNING_KEY_SECRET (the
// database outlives a run, so the secret must too); what the development default sealed is
// re-sealed under it once.
if (!process.env.SIGNING_KEY_SECRET) {
  const dataDir = dataDirFrom();
  ensureDir(dataDir);
  const secret = await dataDirSigningKeySecret(
    dataDir,
    process.env,
    resealDatabase(options.databaseUrl),
  ).catch((error: unknown) => {
    say(
      `SIGNING_KEY_SECRET: the data dir's secret could not take over: ${(error as Error).message}`,
    );
    process.exit(1);
  });
  options.env = { ...options.env, SIGNING_KEY_SECRET: secret };
}
const mesh = await startMesh(options).catch((error: unknown) => {
  say(`the mesh did not start: ${(error as Error).message}`);
  process.exit(1);
});
say(
  `gateway ${mesh.url}; ${Object.entries(mesh.addresses)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")}`,
);

let stopping = false;
const shutdown = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  say(`${signal}: draining the gateway, then the services`);
  mesh.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      say(`stop failed: ${(error as Error).message}`);
      process.exit(1);
    },
  );
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, shutdown);
