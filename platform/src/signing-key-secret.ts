import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  DEVELOPMENT_SIGNING_KEY_SECRET,
  KeyDecryptionError,
  openPrivateKey,
  sealPrivateKey,
  createPool,
  withTransaction,
  type Logger,
  type Pool,
  type PoolClient,
} from "@switchboard/kit";
import { ResponseSealer } from "@switchboard/gateway/policies/response-sealing";
import { createSecretBox } from "@switchboard/webhook/secret-box";
import { keptSecret, SIGNING_KEY_SECRET_FILE } from "./data-dir.js";

/** Written once everything sealed under the development default is sealed under the data dir's secret. */
const RESEALED_MARKER = `${SIGNING_KEY_SECRET_FILE}.resealed`;

/**
 * SIGNING_KEY_SECRET for the embedded mode and `npm run mesh`: the operator's when set,
 * otherwise one generated into the data dir (mode 0600) and kept. Until that secret has taken
 * over (a marker file says so), what earlier versions sealed under the public development
 * default is re-sealed under it, once, in one transaction (`reseal`).
 */
export async function dataDirSigningKeySecret(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  reseal: (secret: string) => Promise<ResealCounts>,
  logger?: Logger,
): Promise<string> {
  if (env.SIGNING_KEY_SECRET) return env.SIGNING_KEY_SECRET;
  const { secret } = keptSecret(dataDir, SIGNING_KEY_SECRET_FILE);
  const marker = join(dataDir, RESEALED_MARKER);
  if (!existsSync(marker)) {
    const counts = await reseal(secret);
    if (counts.signingKeys + counts.webhookSecrets + counts.storedResponses > 0) {
      logger?.info(counts, "re-sealed data from the development signing key secret");
    }
    writeFileSync(marker, "", { mode: 0o600 });
  }
  return secret;
}

export interface ResealCounts {
  signingKeys: number;
  webhookSecrets: number;
  storedResponses: number;
}

/** `resealDevelopmentDefault` over a pool of its own on `databaseUrl`. */
export const resealDatabase =
  (databaseUrl: string) =>
  async (secret: string): Promise<ResealCounts> => {
    const pool = createPool(databaseUrl, { name: "switchboard-reseal", max: 1 });
    try {
      return await resealDevelopmentDefault(pool, secret);
    } finally {
      await pool.end();
    }
  };

/**
 * Re-seals under `secret` every sealed value of the database that opens under the development
 * default: the private signing keys of each schema's `signing_keys`, webhook signing secrets
 * and stored idempotent responses. Values sealed under another secret are left as they are;
 * tables that do not exist (yet) are skipped. Idempotent.
 */
export async function resealDevelopmentDefault(pool: Pool, secret: string): Promise<ResealCounts> {
  return withTransaction(pool, async (client) => ({
    signingKeys: await resealSigningKeys(client, secret),
    webhookSecrets: await resealWebhookSecrets(client, secret),
    storedResponses: await resealStoredResponses(client, secret),
  }));
}

const tableExists = async (client: PoolClient, table: string) =>
  (await client.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [table]))
    .rows[0]?.found === true;

async function resealSigningKeys(client: PoolClient, secret: string): Promise<number> {
  const { rows: schemas } = await client.query<{ schema: string }>(
    `SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'signing_keys'`,
  );
  let count = 0;
  for (const { schema } of schemas) {
    const table = `"${schema.replace(/"/g, '""')}".signing_keys`;
    const { rows } = await client.query<{
      kid: string;
      purpose: string;
      alg: string;
      private_key_encrypted: string;
    }>(`SELECT kid, purpose, alg, private_key_encrypted FROM ${table}`);
    for (const row of rows) {
      const binding = { kid: row.kid, purpose: row.purpose, alg: row.alg };
      let pem: string;
      try {
        pem = await openPrivateKey(
          row.private_key_encrypted,
          DEVELOPMENT_SIGNING_KEY_SECRET,
          binding,
        );
      } catch (error) {
        if (error instanceof KeyDecryptionError) continue;
        throw error;
      }
      await client.query(`UPDATE ${table} SET private_key_encrypted = $2 WHERE kid = $1`, [
        row.kid,
        await sealPrivateKey(pem, secret, binding),
      ]);
      count += 1;
    }
  }
  return count;
}

async function resealWebhookSecrets(client: PoolClient, secret: string): Promise<number> {
  if (!(await tableExists(client, "webhook.subscription_secrets"))) return 0;
  const { rows } = await client.query<{ id: string; subscription_id: string; sealed: string }>(
    "SELECT id, subscription_id, sealed FROM webhook.subscription_secrets",
  );
  if (rows.length === 0) return 0;
  const [from, to] = await Promise.all([
    createSecretBox(DEVELOPMENT_SIGNING_KEY_SECRET),
    createSecretBox(secret),
  ]);
  let count = 0;
  for (const row of rows) {
    const plaintext = opened(() => from.open(row.sealed, row.subscription_id));
    if (plaintext === undefined) continue;
    await client.query("UPDATE webhook.subscription_secrets SET sealed = $2 WHERE id = $1", [
      row.id,
      to.seal(plaintext, row.subscription_id),
    ]);
    count += 1;
  }
  return count;
}

async function resealStoredResponses(client: PoolClient, secret: string): Promise<number> {
  if (!(await tableExists(client, "gateway.idempotency_keys"))) return 0;
  const { rows } = await client.query<{
    account_id: string;
    idempotency_key: string;
    response_body: string;
  }>(
    `SELECT account_id, idempotency_key, response_body FROM gateway.idempotency_keys
      WHERE response_body IS NOT NULL`,
  );
  const from = new ResponseSealer(DEVELOPMENT_SIGNING_KEY_SECRET);
  const to = new ResponseSealer(secret);
  let count = 0;
  for (const row of rows) {
    const body = opened(() => from.open(row.response_body, row.account_id, row.idempotency_key));
    if (body === undefined) continue;
    await client.query(
      `UPDATE gateway.idempotency_keys SET response_body = $3
        WHERE account_id = $1 AND idempotency_key = $2`,
      [row.account_id, row.idempotency_key, to.seal(body, row.account_id, row.idempotency_key)],
    );
    count += 1;
  }
  return count;
}

/** The plaintext, or undefined when the value was not sealed under that secret. */
function opened(open: () => string): string | undefined {
  try {
    return open();
  } catch {
    return undefined;
  }
}
