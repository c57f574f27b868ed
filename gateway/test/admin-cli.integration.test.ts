import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DomainError, createPool, type Pool } from "@switchboard/kit";
import { testDatabaseKinds, type TestDatabase } from "@switchboard/kit/testing";
import { createIdentity, type Identity } from "../src/auth/index.js";
import { runAdminCli } from "../src/admin/index.js";

const SECRET = "cli-signing-key-secret";
/** The platform's own account here (BOOTSTRAP_ACCOUNT): the only one whose credentials hold admin. */
const ADMIN_ACCOUNT = "acct_ops";

describe.each(testDatabaseKinds)("admin CLI on $name", ({ create }) => {
  let database: TestDatabase;
  let pool: Pool;
  let identity: Identity;
  /** Every line any command printed, to check secrets are shown exactly once. */
  const transcript: string[] = [];

  /** Runs the CLI; returns its exit code and its output parsed as `key: value` lines. */
  const run = async (...argv: string[]) => {
    const lines: string[] = [];
    const code = await runAdminCli(argv, {
      databaseUrl: database.url,
      signingKeySecret: SECRET,
      adminAccount: ADMIN_ACCOUNT,
      out: (line) => lines.push(line),
    });
    transcript.push(...lines);
    const fields = Object.fromEntries(
      lines
        .map((line) => /^([a-z_]+): (.*)$/.exec(line))
        .filter((m) => m !== null)
        .map((m) => [m[1], m[2]]),
    ) as Record<string, string>;
    return { code, lines, text: lines.join("\n"), fields };
  };
  const occurrences = (needle: string) => transcript.join("\n").split(needle).length - 1;

  beforeAll(async () => {
    database = await create("admin_cli");
    pool = createPool(database.url, { max: 2 });
    identity = createIdentity({
      pool,
      issuer: "https://gw.test",
      audience: "gw",
      signingKeySecret: SECRET,
    });
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("prints help without touching the database", async () => {
    const lines: string[] = [];
    const io = {
      databaseUrl: "postgres://nobody@127.0.0.1:1/none",
      signingKeySecret: "x",
      adminAccount: ADMIN_ACCOUNT,
      out: (l: string) => lines.push(l),
    };
    expect(await runAdminCli(["help"], io)).toBe(0);
    expect(await runAdminCli([], io)).toBe(0);
    expect(lines.join("\n")).toContain("tokens create --account ACCOUNT --scopes");
    expect(await runAdminCli(["frobnicate", "now"], io)).toBe(2);
    expect(await runAdminCli(["accounts", "list", "--bogus"], io)).toBe(2);
  });

  it("creates and lists accounts", async () => {
    const created = await run("accounts", "create", "--name", "Acme Telecom", "--id", "acct_acme");
    expect(created.code).toBe(0);
    expect(created.fields).toMatchObject({ id: "acct_acme", name: "Acme Telecom" });
    const generated = await run("accounts", "create", "--name", "Other");
    expect(generated.fields.id).toMatch(/^acct_[0-9a-z]{26}$/);
    const listed = await run("accounts", "list", "--json");
    expect(listed.code).toBe(0);
    const accounts = JSON.parse(listed.text) as { id: string; created_at: string }[];
    expect(accounts.map((a) => a.id)).toEqual(["acct_acme", generated.fields.id]);
    expect(accounts[0]?.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const duplicate = await run("accounts", "create", "--name", "Again", "--id", "acct_acme");
    expect(duplicate.code).toBe(1);
    expect(duplicate.text).toBe("error: account acct_acme already exists");
  });

  it("creates a client whose secret is printed once and works", async () => {
    const created = await run(
      "clients",
      "create",
      "--account",
      "acct_acme",
      "--scopes",
      "numbers:read calls:read",
      "--name",
      "ci",
    );
    expect(created.code).toBe(0);
    const { client_id: clientId, client_secret: clientSecret } = created.fields;
    expect(clientId).toMatch(/^cli_/);
    expect(clientSecret).toMatch(/^sbcs_/);
    expect(created.fields.scopes).toBe("numbers:read calls:read");
    const response = await identity.tokenEndpoint({
      contentType: "application/x-www-form-urlencoded",
      form: { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret },
    });
    expect(response.status).toBe(200);
    const listed = await run("clients", "list", "--account", "acct_acme");
    expect(listed.text).toContain(clientId);
    expect(occurrences(clientSecret ?? "-")).toBe(1);

    const unknownScope = await run(
      "clients",
      "create",
      "--account",
      "acct_acme",
      "--scopes",
      "root",
    );
    expect(unknownScope.code).toBe(1);
    expect(unknownScope.text).toContain("unknown scope root");
  });

  it("grants admin only within the platform's account, by the API's rule (exit 1 elsewhere, nothing created)", async () => {
    await run("accounts", "create", "--name", "Tenant", "--id", "acct_tenant");
    for (const noun of ["clients", "tokens"]) {
      const refused = await run(
        noun,
        "create",
        "--account",
        "acct_tenant",
        "--scopes",
        "numbers:read admin",
      );
      expect(refused.code, noun).toBe(1);
      expect(refused.text).toContain("admin is granted only within the platform's account");
    }
    const { rows } = await pool.query(
      `SELECT (SELECT count(*) FROM gateway.clients WHERE account_id = 'acct_tenant')::int AS clients,
              (SELECT count(*) FROM gateway.service_tokens WHERE account_id = 'acct_tenant')::int AS tokens`,
    );
    expect(rows[0]).toEqual({ clients: 0, tokens: 0 });
    // A tenant's client without admin, and admin within the platform's own account: granted.
    expect(
      (await run("clients", "create", "--account", "acct_tenant")).fields.scopes,
    ).not.toContain("admin");
    await run("accounts", "create", "--name", "Operations", "--id", ADMIN_ACCOUNT);
    const ops = await run("tokens", "create", "--account", ADMIN_ACCOUNT, "--scopes", "admin");
    expect(ops.code).toBe(0);
    expect(ops.fields.scopes).toBe("admin");
  });

  it("creates, lists and revokes a service token", async () => {
    const created = await run(
      "tokens",
      "create",
      "--account",
      "acct_acme",
      "--scopes",
      "usage:read,numbers:read",
      "--name",
      "exporter",
      "--expires-in",
      "3600",
    );
    expect(created.code).toBe(0);
    const { token, id } = created.fields;
    expect(token).toMatch(/^sbt_[A-Za-z0-9_-]{43}$/);
    expect(id).toMatch(/^tok_/);
    const principal = await identity.authenticator.authenticate(`Bearer ${token}`);
    expect(principal).toMatchObject({
      kind: "service_token",
      principalId: id,
      accountId: "acct_acme",
    });

    const listed = await run("tokens", "list", "--account", "acct_acme");
    expect(listed.fields).toMatchObject({
      id,
      display_hint: created.fields.display_hint,
      revoked_at: "-",
    });
    expect(occurrences(token ?? "-")).toBe(1);

    const revoked = await run("tokens", "revoke", id ?? "");
    expect(revoked.code).toBe(0);
    expect(revoked.fields.revoked_at).toMatch(/^\d{4}-/);
    const error = await identity.authenticator
      .authenticate(`Bearer ${token}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      kind: "invalid-token",
      detail: "the service token has been revoked",
    });

    expect((await run("tokens", "create", "--account", "acct_acme")).code).toBe(2);
    expect(
      (
        await run(
          "tokens",
          "create",
          "--account",
          "acct_acme",
          "--scopes",
          "usage:read",
          "--expires-in",
          "soon",
        )
      ).code,
    ).toBe(2);
    expect((await run("tokens", "revoke")).code).toBe(2);
    expect((await run("tokens", "revoke", "tok_nope")).text).toBe(
      "error: service token tok_nope was not found",
    );
  });

  it("rotates and lists signing keys", async () => {
    // Issuing a token earlier created the first key.
    const [original] = JSON.parse((await run("keys", "list", "--json")).text) as { kid: string }[];
    expect(original).toMatchObject({ purpose: "access-token", status: "active" });
    const rotated = await run("keys", "rotate");
    expect(rotated.code).toBe(0);
    expect(rotated.fields).toMatchObject({
      purpose: "access-token",
      alg: "EdDSA",
      status: "active",
    });
    const again = await run("keys", "rotate", "--json");
    const second = JSON.parse(again.text) as { kid: string };
    const keys = JSON.parse((await run("keys", "list", "--json")).text) as {
      kid: string;
      status: string;
    }[];
    expect(keys.map((k) => [k.kid, k.status])).toEqual([
      [second.kid, "active"],
      [rotated.fields.kid, "retired"],
      [original?.kid, "retired"],
    ]);
    // A gateway reloads its published keys at most every few seconds; a new process sees all.
    const gateway = createIdentity({
      pool,
      issuer: "https://gw.test",
      audience: "gw",
      signingKeySecret: SECRET,
    });
    const { keys: published } = await gateway.jwks();
    expect(published.map((k) => k.kid).sort()).toEqual(keys.map((k) => k.kid).sort());
    expect(published[0]?.kid).toBe(second.kid);
    expect(transcript.join("\n")).not.toMatch(/PRIVATE KEY|private_key/);
  });
});
