import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CompactSign,
  SignJWT,
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  importPKCS8,
  jwtVerify,
  type CryptoKey,
} from "jose";
import { createPool, type Pool } from "../src/db.js";
import {
  KeyDecryptionError,
  SigningKeyStore,
  createSigningKeysTable,
  openPrivateKey,
  sealPrivateKey,
  type SigningAlgorithm,
  type SigningKeyStoreOptions,
} from "../src/signing/index.js";
import { testDatabaseKinds, type TestDatabase } from "../src/testing.js";

const SECRET = "kit-signing-key-secret-for-tests";
const SCHEMA = "signing_test";
const sealedPattern = /^v1\.15-8-1\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/;

/**
 * Sealed by the gateway's key-encryption.ts before it moved into the kit: keys already in
 * gateway.signing_keys must keep opening.
 */
const gatewaySealed = {
  secret: "gateway-sealed-fixture-secret",
  binding: { kid: "key_01jd0000000000000000000000", purpose: "access-token", alg: "EdDSA" },
  publicJwk: { kty: "OKP", crv: "Ed25519", x: "eDW9Bz7t4hlsbrfz-2MZV4AHSCI815vU4zkIMWDQO6E" },
  envelope:
    "v1.15-8-1.KNgBWY2jizbkMRDvQYk5Rw.OPwMqEVVr_jr0OhK.IVgXTejsh9GzaU9fABeyPpLoHq-kTg6QVWUUeaPMobPTiTEak8XISRHUP_MnydebyBitsBcSf3QPiNWVYrUFcb679BJhhn0WDmkAbbxQO1ceCpUL614kfS0EdADnN8yQ50dGZ-OX0re5phyLhOToDs49BjxjiO0.8czk6B3iVsOC_46GODi4mQ",
};

describe("signing key envelope and DDL", () => {
  it("opens keys the gateway sealed before the move", async () => {
    const pem = await openPrivateKey(
      gatewaySealed.envelope,
      gatewaySealed.secret,
      gatewaySealed.binding,
    );
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const privateKey = await importPKCS8(pem, "EdDSA");
    const jws = await new CompactSign(new TextEncoder().encode("compat"))
      .setProtectedHeader({ alg: "EdDSA" })
      .sign(privateKey);
    const jwks = createLocalJWKSet({ keys: [{ ...gatewaySealed.publicJwk, alg: "EdDSA" }] });
    await expect(compactVerify(jws, jwks)).resolves.toBeDefined();
  });

  it("binds a sealed key to its kid, purpose, alg and secret", async () => {
    const binding = { kid: "key_a", purpose: "passport", alg: "ES256" };
    const sealed = await sealPrivateKey("-----PEM-----", SECRET, binding);
    expect(sealed).toMatch(sealedPattern);
    // The plaintext's dashes cannot occur in the sealed form (base64url fields between dots).
    expect(sealed).not.toContain("-----");
    expect(await openPrivateKey(sealed, SECRET, binding)).toBe("-----PEM-----");
    for (const other of [
      { ...binding, kid: "key_b" },
      { ...binding, purpose: "usage-record" },
      { ...binding, alg: "EdDSA" },
    ]) {
      await expect(openPrivateKey(sealed, SECRET, other)).rejects.toBeInstanceOf(
        KeyDecryptionError,
      );
    }
    await expect(openPrivateKey(sealed, "another-secret", binding)).rejects.toThrow(
      /SIGNING_KEY_SECRET differs/,
    );
    const parts = sealed.split(".");
    const tag = Buffer.from(parts[5] ?? "", "base64url");
    tag[0] = (tag[0] ?? 0) ^ 1;
    const tampered = [...parts.slice(0, 5), tag.toString("base64url")].join(".");
    await expect(openPrivateKey(tampered, SECRET, binding)).rejects.toThrow(KeyDecryptionError);
    await expect(openPrivateKey("v2.x", SECRET, binding)).rejects.toThrow(/unreadable envelope/);
    await expect(sealPrivateKey("pem", "", binding)).rejects.toThrow(TypeError);
  });

  it("quotes a checked schema name into the DDL", () => {
    const ddl = createSigningKeysTable("usage");
    expect(ddl).toContain('CREATE TABLE IF NOT EXISTS "usage".signing_keys');
    expect(ddl).toMatch(
      /UNIQUE INDEX IF NOT EXISTS signing_keys_active_key\s+ON "usage"\.signing_keys \(purpose\) WHERE status = 'active'/,
    );
    for (const bad of ["Usage", "usage; DROP TABLE x", 'a"b', "", "1usage"]) {
      expect(() => createSigningKeysTable(bad)).toThrow(/invalid schema name/);
    }
  });

  it("refuses bad store options", () => {
    const base = {
      pool: {} as Pool,
      schema: SCHEMA,
      secret: SECRET,
      purposes: ["usage-record"],
    };
    const make = (options: Partial<SigningKeyStoreOptions>) =>
      new SigningKeyStore({ ...base, ...options });
    expect(() => make({ schema: 'x"; DROP SCHEMA public; --' })).toThrow(/invalid schema name/);
    expect(() => make({ secret: "" })).toThrow(/secret is empty/);
    expect(() => make({ purposes: [] })).toThrow(/at least one/);
    expect(() => make({ purposes: ["Usage Record"] })).toThrow(/invalid signing purpose/);
    expect(() => make({ algorithms: { other: "EdDSA" } })).toThrow(/not among the purposes/);
    expect(() => make({ algorithms: { "usage-record": "RS256" as SigningAlgorithm } })).toThrow(
      /unsupported signing algorithm/,
    );
    expect(make({}).algorithm("usage-record")).toBe("EdDSA");
    expect(() => make({}).algorithm("passport")).toThrow(/unknown signing purpose/);
  });
});

describe.each(testDatabaseKinds)("signing key store on $name", ({ name, create }) => {
  let database: TestDatabase;
  let pool: Pool;

  const purposes = ["usage-record", "message-template", "passport"];
  const algorithms = { "message-template": "EdDSA", passport: "ES256" } as const;
  const storeOn = (options: Partial<SigningKeyStoreOptions> = {}) =>
    new SigningKeyStore({ pool, schema: SCHEMA, secret: SECRET, purposes, algorithms, ...options });
  const jwksOf = async (store: SigningKeyStore) => createLocalJWKSet(await store.publicJwks());
  const activeRows = async (purpose: string, schema = SCHEMA) =>
    (
      await pool.query<{ kid: string; alg: string }>(
        `SELECT kid, alg FROM "${schema}".signing_keys WHERE purpose = $1 AND status = 'active'`,
        [purpose],
      )
    ).rows;

  beforeAll(async () => {
    database = await create("kit_signing");
    pool = createPool(database.url, { max: name === "pglite" ? 8 : 12, name: "signing-test" });
    for (const schema of [SCHEMA, "signing_other"]) {
      await pool.query(`CREATE SCHEMA ${schema}`);
      await pool.query(createSigningKeysTable(schema));
      await pool.query(createSigningKeysTable(schema)); // idempotent
    }
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("creates one key per purpose with its algorithm and publishes only public parts", async () => {
    const store = storeOn();
    await store.init();
    const { keys } = await store.publicJwks();
    expect(keys).toHaveLength(3);
    const byAlg = (alg: string) => keys.filter((k) => k.alg === alg);
    expect(byAlg("EdDSA")).toHaveLength(2);
    for (const key of byAlg("EdDSA")) {
      expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
      expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", use: "sig" });
    }
    const [ec] = byAlg("ES256");
    expect(Object.keys(ec ?? {}).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x", "y"]);
    expect(ec).toMatchObject({ kty: "EC", crv: "P-256", use: "sig" });
    expect(ec?.kid).toBe((await store.activeKey("passport")).kid);
    for (const purpose of purposes) {
      const rows = await activeRows(purpose);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.alg).toBe(purpose === "passport" ? "ES256" : "EdDSA");
    }
  });

  it("signs with EdDSA and ES256 and verifies against the JWKS and by kid", async () => {
    const store = storeOn();
    const usage = await store.activeKey("usage-record");
    expect(usage.alg).toBe("EdDSA");
    const record = await new SignJWT({ quantity: 3 })
      .setProtectedHeader({ alg: usage.alg, kid: usage.kid })
      .setIssuer("usage")
      .setIssuedAt()
      .sign(usage.privateKey);

    const passport = await store.activeKey("passport");
    expect(passport.alg).toBe("ES256");
    const claims = { attest: "A", dest: { tn: ["15551230000"] }, iat: 1, orig: { tn: "1555" } };
    const ppt = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: "ES256", typ: "passport", ppt: "shaken", kid: passport.kid })
      .sign(passport.privateKey);

    const jwks = await jwksOf(storeOn());
    const verified = await jwtVerify(record, jwks, { algorithms: ["EdDSA"], issuer: "usage" });
    expect(verified.payload.quantity).toBe(3);
    const { payload } = await compactVerify(ppt, jwks, { algorithms: ["ES256"] });
    expect(JSON.parse(new TextDecoder().decode(payload))).toEqual(claims);

    const other = storeOn();
    expect(await other.publicKey("passport", passport.kid)).toBeDefined();
    const byKid = await other.publicKey("usage-record", usage.kid);
    await expect(jwtVerify(record, byKid as CryptoKey)).resolves.toBeDefined();
    // A key verifies only for its own purpose, and only for purposes the store serves.
    expect(await other.publicKey("usage-record", passport.kid)).toBeUndefined();
    expect(await other.publicKey("message-template", usage.kid)).toBeUndefined();
    expect(await other.publicKey("access-token", usage.kid)).toBeUndefined();
    expect(await other.publicKey("passport", "key_unknown")).toBeUndefined();
    await expect(other.activeKey("access-token")).rejects.toThrow(/unknown signing purpose/);
    await expect(other.rotate("access-token")).rejects.toThrow(/unknown signing purpose/);
  });

  it.each(["usage-record", "passport"])(
    "keeps %s keys published and verifying across rotations",
    async (purpose) => {
      const store = storeOn();
      const sign = async () => {
        const key = await store.activeKey(purpose);
        return new SignJWT({ purpose })
          .setProtectedHeader({ alg: key.alg, kid: key.kid })
          .sign(key.privateKey);
      };
      const before = await sign();
      const oldKid = decodeProtectedHeader(before).kid;
      const rotated = await store.rotate(purpose);
      expect(rotated).toMatchObject({ purpose, status: "active", retiredAt: null });
      expect(rotated.alg).toBe(store.algorithm(purpose));
      expect(rotated.kid).not.toBe(oldKid);
      const after = await sign();
      expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);

      // A replica that never saw either key verifies both.
      const jwks = await jwksOf(storeOn());
      for (const token of [before, after]) {
        await expect(jwtVerify(token, jwks)).resolves.toBeDefined();
      }
      const replica = storeOn({ refreshIntervalMs: 0 });
      expect(await replica.publicKey(purpose, oldKid as string)).toBeDefined();
      expect(await replica.publicKey(purpose, rotated.kid)).toBeDefined();

      const { keys } = await store.publicJwks();
      expect(keys.map((k) => k.kid)).toEqual(expect.arrayContaining([rotated.kid, oldKid]));
      expect(keys.findIndex((k) => k.kid === rotated.kid)).toBeLessThan(
        keys.findIndex((k) => k.kid === oldKid),
      );
      const listed = await store.list(purpose);
      expect(listed.slice(0, 2).map((k) => [k.kid, k.status])).toEqual([
        [rotated.kid, "active"],
        [oldKid, "retired"],
      ]);
      expect(listed[1]?.retiredAt).toBeInstanceOf(Date);
      expect(await activeRows(purpose)).toEqual([{ kid: rotated.kid, alg: rotated.alg }]);
    },
  );

  it("stores private keys sealed to their row and secret", async () => {
    const { rows } = await pool.query<{
      kid: string;
      purpose: string;
      alg: string;
      public_jwk: Record<string, unknown>;
      private_key_encrypted: string;
    }>(`SELECT * FROM ${SCHEMA}.signing_keys`);
    expect(rows.length).toBeGreaterThanOrEqual(5);
    for (const row of rows) {
      expect(row.private_key_encrypted).toMatch(sealedPattern);
      expect(JSON.stringify(row)).not.toMatch(/PRIVATE KEY|"d":/);
      expect(Object.keys(row.public_jwk).sort()).toEqual(
        row.alg === "ES256" ? ["crv", "kty", "x", "y"] : ["crv", "kty", "x"],
      );
    }
    const [row, other] = rows;
    if (!row || !other) throw new Error("expected two rows");
    const binding = { kid: row.kid, purpose: row.purpose, alg: row.alg };
    const pem = await openPrivateKey(row.private_key_encrypted, SECRET, binding);
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(row.private_key_encrypted).not.toContain(pem);
    await expect(
      openPrivateKey(row.private_key_encrypted, SECRET, { ...binding, kid: other.kid }),
    ).rejects.toBeInstanceOf(KeyDecryptionError);
    await expect(
      openPrivateKey(row.private_key_encrypted, "a-wrong-secret", binding),
    ).rejects.toThrow(/SIGNING_KEY_SECRET differs/);

    // A row whose sealed key was swapped with another row's does not open.
    await pool.query(
      `UPDATE ${SCHEMA}.signing_keys SET private_key_encrypted = $2 WHERE kid = $1`,
      [row.kid, other.private_key_encrypted],
    );
    await expect(
      openPrivateKey(other.private_key_encrypted, SECRET, binding),
    ).rejects.toBeInstanceOf(KeyDecryptionError);
    await pool.query(
      `UPDATE ${SCHEMA}.signing_keys SET private_key_encrypted = $2 WHERE kid = $1`,
      [row.kid, row.private_key_encrypted],
    );

    // A process with the wrong secret cannot sign, but still verifies.
    const wrong = storeOn({ secret: "a-wrong-secret" });
    await expect(wrong.init()).rejects.toThrow(/SIGNING_KEY_SECRET differs/);
    const key = await storeOn().activeKey("passport");
    const jws = await new CompactSign(new TextEncoder().encode("x"))
      .setProtectedHeader({ alg: "ES256", kid: key.kid })
      .sign(key.privateKey);
    const verifyKey = await wrong.publicKey("passport", key.kid);
    await expect(compactVerify(jws, verifyKey as CryptoKey)).resolves.toBeDefined();
  });

  it("keeps one active key per purpose under 3 concurrent creators and rotators", async () => {
    const race = (alg: SigningAlgorithm) =>
      storeOn({ purposes: ["race"], algorithms: { race: alg } });
    const creators = [race("ES256"), race("ES256"), race("ES256")];
    await Promise.all(creators.map((s) => s.init()));
    const rows = await activeRows("race");
    expect(rows).toHaveLength(1);
    const kids = await Promise.all(creators.map(async (s) => (await s.activeKey("race")).kid));
    expect(new Set(kids)).toEqual(new Set([rows[0]?.kid]));

    const rotated = await Promise.all(creators.map((s) => s.rotate("race")));
    const after = await activeRows("race");
    expect(after).toHaveLength(1);
    expect(rotated.map((r) => r.kid)).toContain(after[0]?.kid);
    const all = await creators[0]?.list("race");
    expect(all?.filter((k) => k.status === "active")).toHaveLength(1);
    expect(all).toHaveLength(4);
  });

  it("refuses to sign with a key of another algorithm than the purpose's", async () => {
    const eddsa = storeOn({ purposes: ["switch"], algorithms: { switch: "EdDSA" } });
    const old = await eddsa.activeKey("switch");
    const es256 = storeOn({ purposes: ["switch"], algorithms: { switch: "ES256" } });
    await expect(es256.activeKey("switch")).rejects.toThrow(
      /is EdDSA, but switch signs with ES256/,
    );
    expect(await es256.publicKey("switch", old.kid)).toBeUndefined();
    const rotated = await es256.rotate("switch");
    expect(rotated.alg).toBe("ES256");
    expect((await es256.activeKey("switch")).kid).toBe(rotated.kid);
  });

  it("keeps each schema's keys to itself", async () => {
    const other = new SigningKeyStore({
      pool,
      schema: "signing_other",
      secret: "another-services-secret",
      purposes: ["usage-record"],
    });
    const key = await other.activeKey("usage-record");
    const { keys } = await other.publicJwks();
    expect(keys.map((k) => k.kid)).toEqual([key.kid]);
    expect((await storeOn().publicJwks()).keys.map((k) => k.kid)).not.toContain(key.kid);
    expect(await storeOn().publicKey("usage-record", key.kid)).toBeUndefined();
    expect(await activeRows("usage-record", "signing_other")).toEqual([
      { kid: key.kid, alg: "EdDSA" },
    ]);
  });
});
