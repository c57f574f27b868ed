import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { createPool, type Pool } from "@switchboard/kit";
import { testDatabaseKinds, type TestDatabase } from "@switchboard/kit/testing";
import {
  createIdentity,
  migrateGateway,
  type Identity,
  type TokenRequest,
} from "../src/auth/index.js";
import {
  createAccount,
  createClient,
  disableClient,
  type CreatedClient,
} from "../src/admin/index.js";

const ISSUER = "https://api.switchboard.test";
const AUDIENCE = "https://api.switchboard.test/v1";
const FORM = "application/x-www-form-urlencoded";

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before they go into Basic. */
const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${formEncode(id)}:${formEncode(secret)}`).toString("base64")}`;

describe.each(testDatabaseKinds)("token endpoint on $name", ({ create }) => {
  let database: TestDatabase;
  let pool: Pool;
  let identity: Identity;
  let client: CreatedClient;

  const request = (input: Partial<TokenRequest> & { form: TokenRequest["form"] }) =>
    identity.tokenEndpoint({ contentType: FORM, ...input });
  const withBasic = (
    form: TokenRequest["form"],
    id = client.clientId,
    secret = client.clientSecret,
  ) => request({ authorization: basic(id, secret), form });

  beforeAll(async () => {
    database = await create("identity_token");
    pool = createPool(database.url, { max: 4 });
    await migrateGateway(pool);
    identity = createIdentity({
      pool,
      issuer: `${ISSUER}/`,
      audience: AUDIENCE,
      signingKeySecret: "test-signing-key-secret",
    });
    await identity.init();
    await createAccount(pool, { id: "acct_tokens", name: "Tokens" });
    client = await createClient(pool, {
      accountId: "acct_tokens",
      name: "reports",
      scopes: ["calls:read", "numbers:write", "numbers:read"],
    });
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("issues an RFC 9068 access token to client_secret_basic", async () => {
    const before = Math.floor(Date.now() / 1000);
    const response = await withBasic({ grant_type: "client_credentials" });
    expect(response.status).toBe(200);
    expect(response.headers["Cache-Control"]).toBe("no-store");
    expect(response.headers["Pragma"]).toBe("no-cache");
    const body = response.body as unknown as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "scope", "token_type"]);
    expect(body).toMatchObject({
      token_type: "Bearer",
      expires_in: 900,
      scope: "numbers:read numbers:write calls:read",
    });
    const token = body.access_token as string;
    const active = await identity.keys.activeKey("access-token");
    expect(decodeProtectedHeader(token)).toEqual({ alg: "EdDSA", typ: "at+jwt", kid: active.kid });
    const claims = decodeJwt(token);
    expect(Object.keys(claims).sort()).toEqual([
      "account_id",
      "aud",
      "client_id",
      "exp",
      "iat",
      "iss",
      "jti",
      "scope",
      "sub",
    ]);
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: AUDIENCE,
      sub: client.clientId,
      client_id: client.clientId,
      account_id: "acct_tokens",
      scope: "numbers:read numbers:write calls:read",
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(900);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);

    const principal = await identity.authenticator.authenticate(`Bearer ${token}`);
    expect(principal).toEqual({
      accountId: "acct_tokens",
      principalId: client.clientId,
      kind: "client",
      scopes: new Set(["numbers:read", "numbers:write", "calls:read"]),
    });
  });

  it("issues to client_secret_post a subset of the client's scopes", async () => {
    const response = await request({
      form: {
        grant_type: "client_credentials",
        client_id: client.clientId,
        client_secret: client.clientSecret,
        scope: "calls:read numbers:read",
      },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ scope: "numbers:read calls:read" });
    const claims = decodeJwt((response.body as { access_token: string }).access_token);
    expect(claims.scope).toBe("numbers:read calls:read");
  });

  it("form-urlencodes the id and secret inside Basic credentials", async () => {
    const special = await createClient(pool, {
      accountId: "acct_tokens",
      clientId: "svc:reports+1%",
      clientSecret: "p@ss: word+with%25 & more",
      scopes: ["usage:read"],
    });
    const response = await withBasic(
      { grant_type: "client_credentials" },
      special.clientId,
      special.clientSecret,
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ scope: "usage:read" });
  });

  it("honours a token lifetime from configuration", async () => {
    const shortLived = createIdentity({
      pool,
      issuer: ISSUER,
      audience: AUDIENCE,
      tokenTtlSeconds: 60,
      signingKeySecret: "test-signing-key-secret",
    });
    const response = await shortLived.tokenEndpoint({
      contentType: `${FORM}; charset=UTF-8`,
      authorization: basic(client.clientId, client.clientSecret),
      form: { grant_type: "client_credentials" },
    });
    expect(response.body).toMatchObject({ expires_in: 60 });
    const claims = decodeJwt((response.body as { access_token: string }).access_token);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(60);
  });

  const expectError = (
    response: Awaited<ReturnType<Identity["tokenEndpoint"]>>,
    status: number,
    error: string,
  ) => {
    expect(response.status).toBe(status);
    expect(response.headers["Cache-Control"]).toBe("no-store");
    expect(response.headers["Pragma"]).toBe("no-cache");
    expect(Object.keys(response.body).sort()).toEqual(["error", "error_description"]);
    expect(response.body).toMatchObject({ error });
    if (error === "invalid_client") {
      expect(response.headers["WWW-Authenticate"]).toBe('Basic realm="switchboard"');
    } else {
      expect(response.headers["WWW-Authenticate"]).toBeUndefined();
    }
  };

  it("refuses a scope the client does not hold, or that does not exist", async () => {
    expectError(
      await withBasic({ grant_type: "client_credentials", scope: "numbers:read admin" }),
      400,
      "invalid_scope",
    );
    expectError(
      await withBasic({ grant_type: "client_credentials", scope: "numbers:read bogus:scope" }),
      400,
      "invalid_scope",
    );
    expectError(
      await withBasic({ grant_type: "client_credentials", scope: "" }),
      400,
      "invalid_scope",
    );
  });

  it("answers 401 invalid_client with a Basic challenge for a wrong secret", async () => {
    expectError(
      await withBasic({ grant_type: "client_credentials" }, client.clientId, "sbcs_wrong"),
      401,
      "invalid_client",
    );
    expectError(
      await request({
        form: { grant_type: "client_credentials", client_id: client.clientId, client_secret: "x" },
      }),
      401,
      "invalid_client",
    );
  });

  it("answers an unknown client exactly like a wrong secret", async () => {
    const unknown = await withBasic({ grant_type: "client_credentials" }, "cli_nobody", "secret");
    const wrong = await withBasic({ grant_type: "client_credentials" }, client.clientId, "secret");
    expectError(unknown, 401, "invalid_client");
    expect(unknown).toEqual(wrong);
  });

  it("refuses a disabled client", async () => {
    const disabled = await createClient(pool, { accountId: "acct_tokens", scopes: ["calls:read"] });
    await disableClient(pool, disabled.clientId);
    expectError(
      await withBasic(
        { grant_type: "client_credentials" },
        disabled.clientId,
        disabled.clientSecret,
      ),
      401,
      "invalid_client",
    );
  });

  it("refuses a request without client authentication", async () => {
    expectError(
      await request({ form: { grant_type: "client_credentials" } }),
      401,
      "invalid_client",
    );
    expectError(
      await request({
        authorization: `Bearer ${client.clientSecret}`,
        form: { grant_type: "client_credentials" },
      }),
      401,
      "invalid_client",
    );
    expectError(
      await request({ authorization: "Basic !!!", form: { grant_type: "client_credentials" } }),
      401,
      "invalid_client",
    );
  });

  it("answers unsupported_grant_type for another grant", async () => {
    expectError(await withBasic({ grant_type: "password" }), 400, "unsupported_grant_type");
    expectError(
      await withBasic({ grant_type: "authorization_code" }),
      400,
      "unsupported_grant_type",
    );
  });

  it("answers invalid_request for a malformed request", async () => {
    expectError(await withBasic({}), 400, "invalid_request");
    expectError(
      await request({
        authorization: basic(client.clientId, client.clientSecret),
        form: { grant_type: "client_credentials", client_secret: client.clientSecret },
      }),
      400,
      "invalid_request",
    );
    expectError(
      await request({
        authorization: basic(client.clientId, client.clientSecret),
        contentType: "application/json",
        form: { grant_type: "client_credentials" },
      }),
      400,
      "invalid_request",
    );
    expectError(
      await request({
        authorization: basic(client.clientId, client.clientSecret),
        contentType: undefined,
        form: { grant_type: "client_credentials" },
      }),
      400,
      "invalid_request",
    );
    expectError(
      await withBasic({ grant_type: ["client_credentials", "client_credentials"] }),
      400,
      "invalid_request",
    );
    expectError(
      await request({ form: { grant_type: "client_credentials", client_secret: "orphan" } }),
      400,
      "invalid_request",
    );
  });

  it("publishes RFC 8414 metadata", () => {
    expect(identity.authorizationServerMetadata()).toEqual({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/oauth/token`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      grant_types_supported: ["client_credentials"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      scopes_supported: expect.arrayContaining(["numbers:read", "agent:smoke", "admin"]),
      response_types_supported: [],
    });
    expect(identity.authorizationServerMetadata().scopes_supported).toHaveLength(13);
  });
});
