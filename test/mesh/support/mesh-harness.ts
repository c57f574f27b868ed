import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createPool, type Pool } from "@switchboard/kit";
import {
  clientCredentialsToken,
  gatewayRequester,
  createRealTestDatabase,
  type TestDatabase,
} from "@switchboard/kit/testing";
import { seedInventory } from "@switchboard/inventory";
import {
  freeMeshPorts,
  startMesh,
  type MeshComponentName,
  type RunningMesh,
} from "@switchboard/platform/mesh";
import { contractFetch, contractFrom } from "@switchboard/test-support/contract";
import { PUBLIC_URL, ROOMY_RATE_LIMITS, testRedisUrl } from "@switchboard/test-support/platform";

/** A mesh of separate processes (built dist/) on a fresh database and its own queue prefix. */
export interface MeshHarness {
  mesh: RunningMesh;
  url: string;
  database: TestDatabase;
  /** A pool on the mesh's database, for checks the API does not show. */
  db: Pool;
  queuePrefix: string;
  accountId: string;
  /** What the supervisor said (restarts), for failure messages. */
  notices: string[];
  token(scope?: string): Promise<string>;
  /** fetch against the gateway, checked against the served OpenAPI document. */
  request(path: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` holds; the last value in the error otherwise. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)?.slice(0, 500)}`);
    await sleep(50);
  }
}

export async function startMeshHarness(
  options: {
    env?: Record<string, string>;
    componentEnv?: Partial<Record<MeshComponentName, Record<string, string>>>;
    seed?: number;
  } = {},
): Promise<MeshHarness> {
  const database = await createRealTestDatabase("mesh");
  const queuePrefix = `sbmesh_${randomBytes(4).toString("hex")}`;
  const accountId = "acct_mesh";
  const clientId = "cli_mesh";
  const clientSecret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const notices: string[] = [];
  let mesh: RunningMesh | undefined;
  const db = createPool(database.url, { name: "mesh-test", max: 4 });
  const cleanUp = async () => {
    await mesh?.stop();
    await db.end();
    await dropRedisKeys(queuePrefix);
    await database.drop();
  };
  try {
    mesh = await startMesh({
      databaseUrl: database.url,
      redisUrl: testRedisUrl(),
      queuePrefix,
      ports: await freeMeshPorts(),
      env: {
        ...process.env,
        NODE_ENV: "test",
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? (process.env.LOG_CAPTURE_DIR ? "debug" : "warn"),
        HOST: "127.0.0.1",
        ADMIN_HOST: "127.0.0.1",
        INVENTORY_GRPC_HOST: "127.0.0.1",
        CALL_CONTROL_GRPC_HOST: "127.0.0.1",
        MESSAGING_GRPC_HOST: "127.0.0.1",
        USAGE_GRPC_HOST: "127.0.0.1",
        WEBHOOK_GRPC_HOST: "127.0.0.1",
        DATABASE_POOL_SIZE: "4",
        MESSAGING_DELIVERY_POOL_SIZE: "3",
        PUBLIC_URL,
        BOOTSTRAP_ACCOUNT: accountId,
        BOOTSTRAP_CLIENT_ID: clientId,
        BOOTSTRAP_CLIENT_SECRET: clientSecret,
        REDIS_KEY_PREFIX: `${queuePrefix}:rl:`,
        RATE_LIMITS: ROOMY_RATE_LIMITS,
        ...options.env,
      },
      ...(options.componentEnv ? { componentEnv: options.componentEnv } : {}),
      output: () => undefined,
      notice: (message) => void notices.push(message),
      restartBackoff: { initialMs: 200, maxMs: 2_000 },
    });
    await seedInventory(db, { count: options.seed ?? 2_000, seed: 11 });
  } catch (error) {
    await cleanUp().catch(() => undefined);
    throw error;
  }
  const url = mesh.url;
  const checkedFetch = contractFetch(await contractFrom(url), { enforce: true });

  const request: MeshHarness["request"] = gatewayRequester(checkedFetch, url);

  return {
    mesh,
    url,
    database,
    db,
    queuePrefix,
    accountId,
    notices,
    request,
    token: (scope) =>
      clientCredentialsToken(
        (init) => request("/oauth/token", init),
        { id: clientId, secret: clientSecret },
        scope,
      ),
    stop: cleanUp,
  };
}

async function dropRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(testRedisUrl());
  try {
    const keys = await redis.keys(`${prefix}*`);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  } finally {
    redis.disconnect();
  }
}

/** Holds and assigns the first available number with `capability`; returns its E.164 form. */
export async function assignNumber(
  h: MeshHarness,
  token: string,
  capability: string,
): Promise<string> {
  const search = await h.request(`/v1/api/numbers/search?capabilities=${capability}&limit=1`, {
    token,
  });
  const number = ((await search.json()) as { data: { number: string }[] }).data[0]?.number;
  if (!number) throw new Error(`no available number with ${capability}`);
  const held = await h.request("/v1/api/numbers/hold", { method: "POST", token, json: { number } });
  if (held.status !== 201) throw new Error(`hold failed: ${held.status}`);
  const { id } = (await held.json()) as { id: string };
  const assigned = await h.request(`/v1/api/numbers/holds/${id}/assign`, { method: "POST", token });
  if (assigned.status !== 200) throw new Error(`assign failed: ${assigned.status}`);
  return number;
}
