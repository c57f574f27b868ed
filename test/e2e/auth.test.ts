import { SignJWT, base64url, decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCESS_TOKEN_PURPOSE } from "@switchboard/gateway/auth";
import { createServiceToken, revokeServiceToken } from "@switchboard/gateway/admin";
import {
  PUBLIC_URL,
  startTestPlatform,
  type TestPlatform,
} from "@switchboard/test-support/platform";

const realm = 'Bearer realm="switchboard"';

async function expectInvalidToken(response: Response) {
  expect(response.status).toBe(401);
  expect(response.headers.get("www-authenticate")).toBe(`${realm}, error="invalid_token"`);
  expect(((await response.json()) as { code: string }).code).toBe("INVALID_TOKEN");
}

/** Every authentication failure of docs/api.md, over HTTP through the gateway. */
describe("authentication and permissions over HTTP", () => {
  let platform: TestPlatform;
  let token: string;
  const search = "/v1/api/numbers/search?limit=1";

  beforeAll(async () => {
    platform = await startTestPlatform({ database: "postgres", seed: 200 });
    token = await platform.token();
  });
  afterAll(async () => platform?.stop());

  /** Signs claims with the platform's real access-token key, to vary one thing at a time. */
  async function signWithPlatformKey(
    claims: Record<string, unknown>,
    header: Record<string, unknown> = {},
  ): Promise<string> {
    const key = await platform.gateway.identity.keys.activeKey(ACCESS_TOKEN_PURPOSE);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "EdDSA", typ: "at+jwt", kid: key.kid, ...header })
      .sign(key.privateKey);
  }

  it("accepts a valid access token", async () => {
    const response = await platform.request(search, { token });
    expect(response.status).toBe(200);
    const header = decodeProtectedHeader(token);
    expect(header).toMatchObject({ alg: "EdDSA", typ: "at+jwt" });
    expect(decodeJwt(token)).toMatchObject({
      iss: PUBLIC_URL,
      aud: PUBLIC_URL,
      account_id: platform.accountId,
    });
  });

  it("no credential → 401 unauthenticated with a Bearer challenge", async () => {
    const response = await platform.request(search);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(realm);
    expect(((await response.json()) as { code: string }).code).toBe("UNAUTHENTICATED");
  });

  it("garbage → invalid-token", async () => {
    await expectInvalidToken(await platform.request(search, { token: "not.a.jwt" }));
    await expectInvalidToken(await platform.request(search, { token: "sbt_garbage" }));
  });

  it("alg: none → invalid-token", async () => {
    const [, payload] = token.split(".");
    const header = base64url.encode(JSON.stringify({ alg: "none", typ: "at+jwt" }));
    await expectInvalidToken(await platform.request(search, { token: `${header}.${payload}.` }));
  });

  it("an altered payload → invalid-token", async () => {
    const [header, payload, signature] = token.split(".");
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload!)));
    claims.account_id = "acct_someone_else";
    const altered = base64url.encode(JSON.stringify(claims));
    await expectInvalidToken(
      await platform.request(search, { token: `${header}.${altered}.${signature}` }),
    );
  });

  it("HS256 signed with the public key → invalid-token", async () => {
    const jwks = (await (await platform.request("/.well-known/jwks.json")).json()) as {
      keys: { kid: string; x: string }[];
    };
    const publicKey = jwks.keys[0]!;
    const forged = await new SignJWT(decodeJwt(token))
      .setProtectedHeader({ alg: "HS256", typ: "at+jwt", kid: publicKey.kid })
      .sign(base64url.decode(publicKey.x));
    await expectInvalidToken(await platform.request(search, { token: forged }));
  });

  it("wrong typ, aud or iss, or expired → invalid-token", async () => {
    const claims = decodeJwt(token);
    const now = Math.floor(Date.now() / 1000);
    await expectInvalidToken(
      await platform.request(search, { token: await signWithPlatformKey(claims, { typ: "JWT" }) }),
    );
    await expectInvalidToken(
      await platform.request(search, {
        token: await signWithPlatformKey({ ...claims, aud: "https://elsewhere.example" }),
      }),
    );
    await expectInvalidToken(
      await platform.request(search, {
        token: await signWithPlatformKey({ ...claims, iss: "https://evil.example" }),
      }),
    );
    await expectInvalidToken(
      await platform.request(search, {
        token: await signWithPlatformKey({ ...claims, iat: now - 3600, exp: now - 1800 }),
      }),
    );
    // The control: the same key and claims, unaltered, are accepted.
    expect(
      (await platform.request(search, { token: await signWithPlatformKey(claims) })).status,
    ).toBe(200);
  });

  it("a service token works until it is revoked", async () => {
    const created = await createServiceToken(platform.gateway.pool, {
      accountId: platform.accountId,
      scopes: ["numbers:read"],
      name: "ci",
    });
    expect(created.token).toMatch(/^sbt_/);
    expect((await platform.request(search, { token: created.token })).status).toBe(200);
    await revokeServiceToken(platform.gateway.pool, created.id);
    await expectInvalidToken(await platform.request(search, { token: created.token }));
  });

  it("a valid credential lacking the permission → 403 insufficient-scope naming it", async () => {
    const readOnly = await platform.token("numbers:read");
    const response = await platform.request("/v1/api/numbers/hold", {
      method: "POST",
      token: readOnly,
      json: { number: "+14155550100" },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe(
      `${realm}, error="insufficient_scope", scope="numbers:write"`,
    );
    expect(((await response.json()) as { code: string }).code).toBe("INSUFFICIENT_SCOPE");
  });

  it("the token endpoint answers RFC 6749 errors, never problem+json, with no-store", async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${platform.url}/oauth/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
        body,
      });
    const viaPost = await post(
      new URLSearchParams({
        grant_type: "client_credentials",
        client_id: platform.clientId,
        client_secret: platform.clientSecret,
        scope: "numbers:read",
      }).toString(),
    );
    expect(viaPost.status).toBe(200);
    expect(viaPost.headers.get("cache-control")).toBe("no-store");
    expect(await viaPost.json()).toMatchObject({
      token_type: "Bearer",
      expires_in: 900,
      scope: "numbers:read",
    });

    const badSecret = await post("grant_type=client_credentials", {
      Authorization: `Basic ${Buffer.from(`${platform.clientId}:wrong-secret-value`).toString("base64")}`,
    });
    expect(badSecret.status).toBe(401);
    expect(badSecret.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect(await badSecret.json()).toMatchObject({ error: "invalid_client" });

    const basic = {
      Authorization: `Basic ${Buffer.from(`${platform.clientId}:${platform.clientSecret}`).toString("base64")}`,
    };
    expect(await (await post("grant_type=password", basic)).json()).toMatchObject({
      error: "unsupported_grant_type",
    });
    expect(
      await (await post("grant_type=client_credentials&scope=admin:everything", basic)).json(),
    ).toMatchObject({
      error: "invalid_scope",
    });
    const wrongType = await fetch(`${platform.url}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...basic },
      body: JSON.stringify({ grant_type: "client_credentials" }),
    });
    expect(wrongType.status).toBe(400);
    expect(await wrongType.json()).toMatchObject({ error: "invalid_request" });
  });

  it("publishes discovery documents", async () => {
    const metadata = (await (
      await platform.request("/.well-known/oauth-authorization-server")
    ).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: PUBLIC_URL,
      token_endpoint: `${PUBLIC_URL}/oauth/token`,
      jwks_uri: `${PUBLIC_URL}/.well-known/jwks.json`,
    });
    const jwks = (await (await platform.request("/.well-known/jwks.json")).json()) as {
      keys: { kid: string; alg: string }[];
    };
    expect(jwks.keys[0]).toMatchObject({ alg: "EdDSA", kid: decodeProtectedHeader(token).kid });
  });
});
