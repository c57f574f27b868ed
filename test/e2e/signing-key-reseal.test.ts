import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPool,
  DEVELOPMENT_SIGNING_KEY_SECRET,
  KeyDecryptionError,
  openPrivateKey,
  type Pool,
} from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { migrateGateway, SigningKeyStore } from "@switchboard/gateway/auth";
import { ResponseSealer } from "@switchboard/gateway/policies/response-sealing";
import { migrateWebhook } from "@switchboard/webhook";
import { createSecretBox } from "@switchboard/webhook/secret-box";
import { resealDevelopmentDefault } from "@switchboard/platform/signing-key-secret";

const NEW_SECRET = "a-generated-data-dir-signing-key-secret-0123456789";
const OTHER_SECRET = "an-operator-secret-that-is-not-the-default-0123456789";

/**
 * An existing data dir sealed everything under the public development default: its first
 * start with a generated SIGNING_KEY_SECRET re-seals all of it (issue 27, item 3), on real
 * PostgreSQL, and leaves what another secret sealed alone.
 */
describe("re-sealing what the development default sealed", () => {
  let database: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    database = await createRealTestDatabase("reseal");
    pool = createPool(database.url, { max: 2 });
    await migrateGateway(pool);
    await migrateWebhook(pool);
    await new SigningKeyStore({ pool, secret: DEVELOPMENT_SIGNING_KEY_SECRET }).init();
    const box = await createSecretBox(DEVELOPMENT_SIGNING_KEY_SECRET);
    const other = await createSecretBox(OTHER_SECRET);
    await pool.query(
      `INSERT INTO webhook.subscriptions (id, account_id, url, events, status)
       VALUES ('whs_old', 'acct_a', 'https://example.com/hook', '{*}', 'active'),
              ('whs_other', 'acct_a', 'https://example.com/hook', '{*}', 'active')`,
    );
    await pool.query(
      `INSERT INTO webhook.subscription_secrets (subscription_id, sealed) VALUES ($1, $2), ($3, $4)`,
      [
        "whs_old",
        box.seal("whsec_old", "whs_old"),
        "whs_other",
        other.seal("whsec_other", "whs_other"),
      ],
    );
    const sealer = new ResponseSealer(DEVELOPMENT_SIGNING_KEY_SECRET);
    await pool.query(
      `INSERT INTO gateway.idempotency_keys (account_id, idempotency_key, fingerprint, state,
         response_status, response_body, completed_at, expires_at)
       VALUES ('acct_a', 'k1', $1, 'completed', 201, $2, now(), now() + interval '1 day')`,
      [Buffer.alloc(32), sealer.seal('{"secret":"whsec_old"}', "acct_a", "k1")],
    );
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("re-seals signing keys, webhook secrets and stored replies once, and nothing else", async () => {
    expect(await resealDevelopmentDefault(pool, NEW_SECRET)).toEqual({
      signingKeys: 1,
      webhookSecrets: 1,
      storedResponses: 1,
    });
    // Idempotent: a second run finds nothing under the default.
    expect(await resealDevelopmentDefault(pool, NEW_SECRET)).toEqual({
      signingKeys: 0,
      webhookSecrets: 0,
      storedResponses: 0,
    });

    const { rows: keys } = await pool.query<{
      kid: string;
      purpose: string;
      alg: string;
      private_key_encrypted: string;
    }>("SELECT kid, purpose, alg, private_key_encrypted FROM gateway.signing_keys");
    const binding = { kid: keys[0]!.kid, purpose: keys[0]!.purpose, alg: keys[0]!.alg };
    await expect(
      openPrivateKey(keys[0]!.private_key_encrypted, DEVELOPMENT_SIGNING_KEY_SECRET, binding),
    ).rejects.toBeInstanceOf(KeyDecryptionError);
    // The gateway opens its key under the new secret.
    await new SigningKeyStore({ pool, secret: NEW_SECRET }).init();

    const secrets = new Map(
      (
        await pool.query<{ subscription_id: string; sealed: string }>(
          "SELECT subscription_id, sealed FROM webhook.subscription_secrets",
        )
      ).rows.map((row) => [row.subscription_id, row.sealed]),
    );
    const box = await createSecretBox(NEW_SECRET);
    expect(box.open(secrets.get("whs_old")!, "whs_old")).toBe("whsec_old");
    // Sealed under another secret: left as it was.
    const other = await createSecretBox(OTHER_SECRET);
    expect(other.open(secrets.get("whs_other")!, "whs_other")).toBe("whsec_other");

    const { rows: replies } = await pool.query<{ response_body: string }>(
      "SELECT response_body FROM gateway.idempotency_keys",
    );
    expect(new ResponseSealer(NEW_SECRET).open(replies[0]!.response_body, "acct_a", "k1")).toBe(
      '{"secret":"whsec_old"}',
    );
    expect(() =>
      new ResponseSealer(DEVELOPMENT_SIGNING_KEY_SECRET).open(
        replies[0]!.response_body,
        "acct_a",
        "k1",
      ),
    ).toThrow();
  });
});
