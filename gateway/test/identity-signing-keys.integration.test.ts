import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeProtectedHeader } from "jose";
import { createPool, openPrivateKey, sealPrivateKey, type Pool } from "@switchboard/kit";
import { testDatabaseKinds, type TestDatabase } from "@switchboard/kit/testing";
import {
  SigningKeyStore,
  createIdentity,
  migrateGateway,
  type Identity,
} from "../src/auth/index.js";
import {
  createAccount,
  createClient,
  listSigningKeys,
  rotateSigningKey,
  type CreatedClient,
} from "../src/admin/index.js";

const SECRET = "signing-key-secret-for-tests";

describe.each(testDatabaseKinds)("signing keys on $name", ({ create }) => {
  let database: TestDatabase;
  let pool: Pool;
  let identity: Identity;
  let client: CreatedClient;

  const issue = async (on: Identity = identity) => {
    const response = await on.tokenEndpoint({
      contentType: "application/x-www-form-urlencoded",
      form: {
        grant_type: "client_credentials",
        client_id: client.clientId,
        client_secret: client.clientSecret,
      },
    });
    expect(response.status).toBe(200);
    return (response.body as { access_token: string }).access_token;
  };
  const identityOn = (secret = SECRET) =>
    createIdentity({ pool, issuer: "https://gw.test", audience: "gw", signingKeySecret: secret });

  beforeAll(async () => {
    database = await create("identity_keys");
    pool = createPool(database.url, { max: 6 });
    await migrateGateway(pool);
    identity = identityOn();
    await createAccount(pool, { id: "acct_keys", name: "Keys" });
    client = await createClient(pool, { accountId: "acct_keys", scopes: ["numbers:read"] });
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("creates exactly one active key when replicas start together", async () => {
    const replicas = [identity, identityOn(), identityOn()];
    await Promise.all(replicas.map((r) => r.init()));
    const { rows } = await pool.query(
      "SELECT kid FROM gateway.signing_keys WHERE purpose = 'access-token' AND status = 'active'",
    );
    expect(rows).toHaveLength(1);
    const kids = await Promise.all(
      replicas.map(async (r) => (await r.keys.activeKey("access-token")).kid),
    );
    expect(new Set(kids)).toEqual(new Set([rows[0].kid]));
  });

  it("publishes public keys only, each with kid, alg and use", async () => {
    const { keys } = await identity.jwks();
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0] ?? {}).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
    expect(keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
  });

  it("stores the private key sealed, never in the clear", async () => {
    const { rows } = await pool.query("SELECT * FROM gateway.signing_keys");
    for (const row of rows) {
      expect(row.private_key_encrypted).toMatch(/^v1\.15-8-1\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(JSON.stringify(row)).not.toMatch(/PRIVATE KEY|"d":/);
      expect(Object.keys(row.public_jwk).sort()).toEqual(["crv", "kty", "x"]);
    }
  });

  it("keeps verifying tokens signed before a rotation", async () => {
    const before = await issue();
    const oldKid = decodeProtectedHeader(before).kid;
    const rotated = await rotateSigningKey(identity.keys);
    expect(rotated).toMatchObject({ purpose: "access-token", alg: "EdDSA", status: "active" });
    expect(rotated.kid).not.toBe(oldKid);

    const after = await issue();
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);
    await expect(identity.authenticator.authenticate(`Bearer ${before}`)).resolves.toMatchObject({
      kind: "client",
    });
    await expect(identity.authenticator.authenticate(`Bearer ${after}`)).resolves.toMatchObject({
      kind: "client",
    });

    const { keys } = await identity.jwks();
    expect(keys.map((k) => k.kid)).toEqual([rotated.kid, oldKid]);
    const listed = await listSigningKeys(identity.keys);
    expect(listed.map((k) => [k.kid, k.status])).toEqual([
      [rotated.kid, "active"],
      [oldKid, "retired"],
    ]);
    expect(listed[1]?.retiredAt).toBeInstanceOf(Date);
  });

  it("lets another replica verify a key it has not seen, and follow a rotation", async () => {
    const other = identityOn();
    await issue(other);
    const rotated = await rotateSigningKey(identity.keys);
    const fresh = await issue();
    expect(decodeProtectedHeader(fresh).kid).toBe(rotated.kid);
    // The other replica learns the new kid on first sight.
    await expect(other.authenticator.authenticate(`Bearer ${fresh}`)).resolves.toBeDefined();
    // It signs with the retired key until its active-key TTL runs out; those tokens verify.
    const stale = await issue(other);
    expect(decodeProtectedHeader(stale).kid).not.toBe(rotated.kid);
    await expect(identity.authenticator.authenticate(`Bearer ${stale}`)).resolves.toBeDefined();
    // Once the TTL has passed it follows the rotation.
    const eager = new SigningKeyStore({ pool, secret: SECRET, activeKeyTtlMs: 0 });
    expect((await eager.activeKey("access-token")).kid).toBe(rotated.kid);
    const next = await rotateSigningKey(identity.keys);
    expect((await eager.activeKey("access-token")).kid).toBe(next.kid);
  });

  it("reloads on an unknown kid at most once per refresh interval", async () => {
    const store = new SigningKeyStore({ pool, secret: SECRET, refreshIntervalMs: 60_000 });
    const current = await store.activeKey("access-token");
    expect(await store.publicKey("access-token", current.kid)).toBeDefined();
    const rotated = await new SigningKeyStore({ pool, secret: SECRET }).rotate();
    expect(await store.publicKey("access-token", rotated.kid)).toBeUndefined();
    expect(await store.publicKey("other-purpose", current.kid)).toBeUndefined();
  });

  it("signs only with the secret the keys were sealed with, but verifies without it", async () => {
    const wrong = identityOn("another-secret");
    await expect(wrong.init()).rejects.toThrow(/SIGNING_KEY_SECRET differs/);
    const token = await issue();
    await expect(wrong.authenticator.authenticate(`Bearer ${token}`)).resolves.toBeDefined();
  });

  it("binds a sealed key to its kid and purpose", async () => {
    const binding = { kid: "key_a", purpose: "access-token", alg: "EdDSA" };
    const sealed = await sealPrivateKey("-----PEM-----", SECRET, binding);
    expect(await openPrivateKey(sealed, SECRET, binding)).toBe("-----PEM-----");
    await expect(openPrivateKey(sealed, SECRET, { ...binding, kid: "key_b" })).rejects.toThrow();
    await expect(
      openPrivateKey(sealed, SECRET, { ...binding, purpose: "usage-record" }),
    ).rejects.toThrow();
    const parts = sealed.split(".");
    const tag = Buffer.from(parts[5] ?? "", "base64url");
    tag[0] = (tag[0] ?? 0) ^ 1;
    const tampered = [...parts.slice(0, 5), tag.toString("base64url")].join(".");
    await expect(openPrivateKey(tampered, SECRET, binding)).rejects.toThrow();
  });

  it("keeps keys per purpose apart", async () => {
    const store = new SigningKeyStore({
      pool,
      secret: SECRET,
      purposes: ["access-token", "usage-record"],
    });
    const { keys } = await store.publicJwks();
    const usageKey = await store.activeKey("usage-record");
    expect(keys.map((k) => k.kid)).toContain(usageKey.kid);
    expect(await store.publicKey("access-token", usageKey.kid)).toBeUndefined();
    expect(await store.publicKey("usage-record", usageKey.kid)).toBeDefined();
    await expect(rotateSigningKey(store, "Bad Purpose")).rejects.toMatchObject({
      kind: "validation-failed",
    });
    await expect(rotateSigningKey(identity.keys, "usage-record")).rejects.toMatchObject({
      kind: "validation-failed",
    });
  });

  // gateway.signing_keys is the kit's table (migrate's kitTables); packages/kit/test/kit-tables
  // checks that its DDL is what the gateway's migration used to create.
  it("uses the kit's store over gateway.signing_keys", async () => {
    const row = (
      await pool.query<{
        kid: string;
        purpose: string;
        alg: string;
        private_key_encrypted: string;
      }>("SELECT * FROM gateway.signing_keys WHERE status = 'active' AND purpose = 'access-token'")
    ).rows[0];
    if (!row) throw new Error("no active access-token key");
    const { kid, purpose, alg } = row;
    await expect(
      openPrivateKey(row.private_key_encrypted, SECRET, { kid, purpose, alg }),
    ).resolves.toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });
});
