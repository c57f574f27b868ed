import { randomBytes } from "node:crypto";
import pg from "pg";
import { startEmbeddedPostgres } from "./pglite.js";

/**
 * Test databases. `real` is a fresh PostgreSQL database per call on the server named by
 * TEST_DATABASE_URL (default: the local server); `pglite` is an in-memory PGlite served on a
 * socket. In CI (CI=true) a missing PostgreSQL server is a failure, never a skip.
 */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export const testServerUrl = (): string =>
  process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export async function createRealTestDatabase(label = "t"): Promise<TestDatabase> {
  const name = `sb_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(testServerUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: testServerUrl() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

export async function createPgliteTestDatabase(): Promise<TestDatabase> {
  const server = await startEmbeddedPostgres({});
  return { url: server.url, drop: () => server.stop() };
}

/** Both database kinds, for suites that must pass on each. */
export const testDatabaseKinds = [
  { name: "postgres", create: createRealTestDatabase },
  { name: "pglite", create: () => createPgliteTestDatabase() },
] as const;

/**
 * An access token by the OAuth client-credentials grant (HTTP Basic client authentication), for
 * test harnesses. `post` sends the form to the gateway's `/oauth/token`.
 */
export async function clientCredentialsToken(
  post: (init: RequestInit) => Promise<Response>,
  client: { id: string; secret: string },
  scope?: string,
): Promise<string> {
  const response = await post({
    method: "POST",
    headers: {
      Authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "client_credentials", ...(scope ? { scope } : {}) }),
  });
  if (response.status !== 200) throw new Error(`token request failed: ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** A test request to the gateway: a bearer token and a JSON body by name. */
export type GatewayRequestInit = RequestInit & { token?: string; json?: unknown };

/** Requests to the gateway at `base` through `send` (e.g. a contract-checking fetch). */
export function gatewayRequester(
  send: typeof fetch,
  base: string,
): (path: string, init?: GatewayRequestInit) => Promise<Response> {
  return (path, init = {}) => {
    const { token, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (token) headers.set("Authorization", `Bearer ${token}`);
    if (json !== undefined) headers.set("Content-Type", "application/json");
    return send(`${base}${path}`, {
      ...rest,
      headers,
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
  };
}
