import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@switchboard/kit";
import { testDatabaseKinds, type TestDatabase } from "@switchboard/kit/testing";
import { createIdentity, migrateGateway, scopes, type Identity } from "../src/auth/index.js";
import {
  createAccount,
  createClient,
  createServiceToken,
  ensureBootstrap,
  listAccounts,
  listClients,
  listServiceTokens,
  revokeServiceToken,
} from "../src/admin/index.js";

/** Every column of the row, as text, so a plaintext secret cannot hide in any of them. */
const rowText = (row: Record<string, unknown>) =>
  JSON.stringify(row, (_key, value: unknown) =>
    value !== null && typeof value === "object" && "type" in value && value.type === "Buffer"
      ? Buffer.from((value as unknown as { data: number[] }).data).toString("hex")
      : value,
  );

describe.each(testDatabaseKinds)("admin operations on $name", ({ create }) => {
  let database: TestDatabase;
  let pool: Pool;
  let identity: Identity;

  const tokenFor = (clientId: string, clientSecret: string) =>
    identity.tokenEndpoint({
      contentType: "application/x-www-form-urlencoded",
      form: { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret },
    });

  beforeAll(async () => {
    database = await create("admin_ops");
    pool = createPool(database.url, { max: 4 });
    expect(await migrateGateway(pool)).toContain("1795244400000_identity");
    expect(await migrateGateway(pool)).toEqual([]);
    identity = createIdentity({
      pool,
      issuer: "https://gw.test",
      audience: "gw",
      signingKeySecret: "k",
    });
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  describe("accounts", () => {
    it("creates with a generated or a given id, and lists", async () => {
      const generated = await createAccount(pool, { name: "Generated" });
      expect(generated.id).toMatch(/^acct_[0-9a-z]{26}$/);
      const named = await createAccount(pool, { id: "acct_named", name: "Named" });
      expect(named).toMatchObject({ id: "acct_named", name: "Named" });
      expect(named.createdAt).toBeInstanceOf(Date);
      const ids = (await listAccounts(pool)).map((a) => a.id);
      expect(ids).toEqual(expect.arrayContaining([generated.id, "acct_named"]));
    });

    it("refuses a duplicate id and a malformed one", async () => {
      await createAccount(pool, { id: "acct_dup", name: "Dup" });
      await expect(createAccount(pool, { id: "acct_dup", name: "Again" })).rejects.toMatchObject({
        kind: "conflict",
      });
      await expect(createAccount(pool, { id: "account-1", name: "" })).rejects.toMatchObject({
        kind: "validation-failed",
        meta: { errors: [{ pointer: "#/id" }, { pointer: "#/name" }] },
      });
    });
  });

  describe("clients", () => {
    it("returns the secret once and stores only its scrypt hash", async () => {
      await createAccount(pool, { id: "acct_clients", name: "Clients" });
      const client = await createClient(pool, { accountId: "acct_clients", name: "ci" });
      expect(client.clientId).toMatch(/^cli_[0-9a-z]{26}$/);
      expect(client.clientSecret).toMatch(/^sbcs_[A-Za-z0-9_-]{43}$/);
      expect(client.scopes).toEqual(scopes.filter((s) => s !== "admin"));
      const { rows } = await pool.query("SELECT * FROM gateway.clients WHERE client_id = $1", [
        client.clientId,
      ]);
      expect(rows[0].secret_hash).toMatch(/^\$scrypt\$ln=14,r=8,p=1\$[\w-]{22}\$[\w-]{43}$/);
      const text = rowText(rows[0]);
      expect(text).not.toContain(client.clientSecret);
      expect(text).not.toContain(client.clientSecret.slice(5));
      const listed = await listClients(pool, "acct_clients");
      expect(listed).toHaveLength(1);
      expect(JSON.stringify(listed)).not.toContain(client.clientSecret);
      expect((await tokenFor(client.clientId, client.clientSecret)).status).toBe(200);
    });

    it("validates scopes and the account", async () => {
      await expect(
        createClient(pool, { accountId: "acct_clients", scopes: ["numbers:read", "root"] }),
      ).rejects.toMatchObject({
        kind: "validation-failed",
        meta: { errors: [{ pointer: "#/scopes", detail: "unknown scope root" }] },
      });
      await expect(createClient(pool, { accountId: "acct_missing" })).rejects.toMatchObject({
        kind: "not-found",
      });
      await expect(
        createClient(pool, { accountId: "acct_clients", clientSecret: "short" }),
      ).rejects.toMatchObject({ kind: "validation-failed" });
    });
  });

  describe("service tokens", () => {
    it("returns an sbt_ token once and stores only its SHA-256 and a hint", async () => {
      await createAccount(pool, { id: "acct_tokens", name: "Tokens" });
      const created = await createServiceToken(pool, {
        accountId: "acct_tokens",
        scopes: ["usage:read", "numbers:read", "usage:read"],
        name: "exporter",
        expiresInSeconds: 3600,
      });
      expect(created.id).toMatch(/^tok_[0-9a-z]{26}$/);
      expect(created.token).toMatch(/^sbt_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(created.token.slice(4), "base64url")).toHaveLength(32);
      expect(created.scopes).toEqual(["numbers:read", "usage:read"]);
      expect(created.displayHint).toBe(
        `sbt_${created.token.slice(4, 8)}…${created.token.slice(-4)}`,
      );
      const expiresIn = (created.expiresAt?.getTime() ?? 0) - created.createdAt.getTime();
      expect(expiresIn).toBe(3_600_000);

      const { rows } = await pool.query("SELECT * FROM gateway.service_tokens WHERE id = $1", [
        created.id,
      ]);
      const row = rows[0];
      expect(
        Buffer.compare(row.token_hash, createHash("sha256").update(created.token).digest()),
      ).toBe(0);
      const text = rowText(row);
      expect(text).not.toContain(created.token);
      expect(text).not.toContain(created.token.slice(4, 30));

      const listed = await listServiceTokens(pool, "acct_tokens");
      expect(listed.map((t) => t.id)).toEqual([created.id]);
      expect(listed[0]).not.toHaveProperty("token");
      expect(JSON.stringify(listed)).not.toContain(created.token);
    });

    it("revokes once, keeps the first revocation time, and hides other accounts' tokens", async () => {
      const created = await createServiceToken(pool, {
        accountId: "acct_tokens",
        scopes: ["usage:read"],
      });
      expect(created.expiresAt).toBeNull();
      await expect(
        revokeServiceToken(pool, created.id, { accountId: "acct_clients" }),
      ).rejects.toMatchObject({ kind: "not-found" });
      const first = await revokeServiceToken(pool, created.id, { accountId: "acct_tokens" });
      expect(first.revokedAt).toBeInstanceOf(Date);
      const second = await revokeServiceToken(pool, created.id);
      expect(second.revokedAt).toEqual(first.revokedAt);
      await expect(revokeServiceToken(pool, "tok_missing")).rejects.toMatchObject({
        kind: "not-found",
      });
    });

    it("requires known scopes and a sane lifetime", async () => {
      for (const input of [
        { scopes: [] },
        { scopes: ["bogus"] },
        { scopes: ["usage:read"], expiresInSeconds: 0 },
        { scopes: ["usage:read"], expiresInSeconds: 1.5 },
      ]) {
        await expect(
          createServiceToken(pool, { accountId: "acct_tokens", ...input }),
        ).rejects.toMatchObject({ kind: "validation-failed" });
      }
    });
  });

  describe("bootstrap", () => {
    const input = {
      accountId: "acct_default",
      clientId: "bootstrap-client",
      clientSecret: "bootstrap-secret-0123456789",
    };

    it("creates the account and a client with every scope, then is idempotent", async () => {
      expect(await ensureBootstrap(pool, input)).toMatchObject({
        accountCreated: true,
        clientCreated: true,
        secretUpdated: false,
      });
      const again = await ensureBootstrap(pool, input);
      expect(again).toMatchObject({
        accountCreated: false,
        clientCreated: false,
        secretUpdated: false,
      });
      const response = await tokenFor(input.clientId, input.clientSecret);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ scope: scopes.join(" ") });
    });

    it("updates the secret and scopes of an existing client to match", async () => {
      await pool.query(
        "UPDATE gateway.clients SET scopes = '{numbers:read}' WHERE client_id = $1",
        [input.clientId],
      );
      const changed = { ...input, clientSecret: "a-new-bootstrap-secret-987654" };
      expect(await ensureBootstrap(pool, changed)).toMatchObject({ secretUpdated: true });
      expect((await tokenFor(input.clientId, input.clientSecret)).status).toBe(401);
      const response = await tokenFor(input.clientId, changed.clientSecret);
      expect(response.body).toMatchObject({ scope: scopes.join(" ") });
    });

    it("runs safely on replicas starting together", async () => {
      const concurrent = {
        accountId: "acct_race",
        clientId: "race",
        clientSecret: "race-secret-0123456789",
      };
      const results = await Promise.all([1, 2, 3].map(() => ensureBootstrap(pool, concurrent)));
      expect(results.filter((r) => r.clientCreated)).toHaveLength(1);
      expect(results.filter((r) => r.accountCreated)).toHaveLength(1);
      expect(results.every((r) => !r.secretUpdated)).toBe(true);
    });

    it("refuses to move a client to another account", async () => {
      await expect(
        ensureBootstrap(pool, { ...input, accountId: "acct_named" }),
      ).rejects.toMatchObject({
        kind: "conflict",
      });
    });
  });
});
