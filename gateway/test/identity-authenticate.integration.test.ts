import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignJWT, base64url, decodeJwt, generateKeyPair, type JWTPayload } from "jose";
import { DomainError, createPool, type Pool } from "@switchboard/kit";
import { testDatabaseKinds, type TestDatabase } from "@switchboard/kit/testing";
import {
  createIdentity,
  migrateGateway,
  requireScope,
  type Identity,
  type Principal,
} from "../src/auth/index.js";
import {
  createAccount,
  createClient,
  createServiceToken,
  revokeServiceToken,
} from "../src/admin/index.js";
import { createAccessTokenVerifier } from "../src/auth/access-token-verifier.js";
import { httpStatusOf } from "../src/http/problem.js";

const ISSUER = "https://api.switchboard.test";
const AUDIENCE = "switchboard-api";

/** The DomainError `authenticate` throws for `header`. */
async function failure(identity: Identity, header: string | undefined): Promise<DomainError> {
  const error = await identity.authenticator.authenticate(header).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe.each(testDatabaseKinds)("authenticate on $name", ({ create }) => {
  let database: TestDatabase;
  let pool: Pool;
  let identity: Identity;
  let accessToken: string;
  let claims: JWTPayload;

  /** Signs `payload` with the gateway's own active key, for tokens that are wrong on purpose. */
  const signWithActiveKey = async (
    payload: JWTPayload,
    header: Record<string, unknown> = { typ: "at+jwt" },
  ) => {
    const key = await identity.keys.activeKey("access-token");
    return new SignJWT(payload)
      .setProtectedHeader({ alg: "EdDSA", kid: key.kid, ...header })
      .sign(key.privateKey);
  };
  const expectInvalid = async (token: string, detail: string | RegExp) => {
    const error = await failure(identity, `Bearer ${token}`);
    expect(error.kind).toBe("invalid-token");
    expect(error.detail).toMatch(detail);
    expect(httpStatusOf(error.kind)).toBe(401);
  };

  beforeAll(async () => {
    database = await create("identity_authn");
    pool = createPool(database.url, { max: 4 });
    await migrateGateway(pool);
    identity = createIdentity({ pool, issuer: ISSUER, audience: AUDIENCE, signingKeySecret: "s3" });
    await createAccount(pool, { id: "acct_authn", name: "Authn" });
    const client = await createClient(pool, {
      accountId: "acct_authn",
      scopes: ["numbers:read", "calls:write"],
    });
    const response = await identity.tokenEndpoint({
      contentType: "application/x-www-form-urlencoded",
      form: {
        grant_type: "client_credentials",
        client_id: client.clientId,
        client_secret: client.clientSecret,
      },
    });
    accessToken = (response.body as { access_token: string }).access_token;
    claims = decodeJwt(accessToken);
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("accepts a valid access token, with any case of the scheme", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      const principal = await identity.authenticator.authenticate(`${scheme} ${accessToken}`);
      expect(principal.kind).toBe("client");
      expect(principal.accountId).toBe("acct_authn");
      expect([...principal.scopes]).toEqual(["numbers:read", "calls:write"]);
    }
  });

  it("is unauthenticated without a Bearer credential", async () => {
    for (const header of [undefined, "", "   ", "Basic dXNlcjpwYXNz", "Token abc", "Bearerabc"]) {
      const error = await failure(identity, header);
      expect(error.kind).toBe("unauthenticated");
      expect(httpStatusOf(error.kind)).toBe(401);
    }
  });

  it("refuses an empty or garbage credential", async () => {
    expect((await failure(identity, "Bearer")).kind).toBe("invalid-token");
    expect((await failure(identity, "Bearer   ")).kind).toBe("invalid-token");
    await expectInvalid("garbage", /malformed/);
    await expectInvalid("not a token", /malformed/);
    await expectInvalid("a.b.c", /malformed/);
    await expectInvalid("x".repeat(10_000), /malformed/);
  });

  it("refuses an unsigned (alg: none) token", async () => {
    const header = base64url.encode(JSON.stringify({ alg: "none", typ: "at+jwt" }));
    const payload = base64url.encode(JSON.stringify(claims));
    await expectInvalid(
      `${header}.${payload}.`,
      "the access token's signing algorithm is not accepted",
    );
  });

  it("refuses a token whose payload was altered", async () => {
    const [header, , signature] = accessToken.split(".");
    const forged = base64url.encode(JSON.stringify({ ...claims, scope: "admin numbers:write" }));
    await expectInvalid(
      `${header}.${forged}.${signature}`,
      "the access token's signature is invalid",
    );
    const otherAccount = base64url.encode(JSON.stringify({ ...claims, account_id: "acct_other" }));
    await expectInvalid(`${header}.${otherAccount}.${signature}`, /signature is invalid/);
  });

  it("refuses an HS256 token keyed with the public key's bytes (algorithm confusion)", async () => {
    const { keys } = await identity.jwks();
    const jwk = keys[0];
    const kid = jwk?.kid ?? "";
    for (const secret of [
      base64url.decode(jwk?.x ?? ""),
      new TextEncoder().encode(JSON.stringify(jwk)),
    ]) {
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256", typ: "at+jwt", kid })
        .sign(secret);
      await expectInvalid(token, "the access token's signing algorithm is not accepted");
    }
  });

  it("refuses a wrong typ", async () => {
    await expectInvalid(
      await signWithActiveKey(claims, { typ: "JWT" }),
      "the access token's typ must be at+jwt",
    );
    await expectInvalid(await signWithActiveKey(claims, {}), /typ must be at\+jwt/);
  });

  it("refuses another audience or issuer", async () => {
    await expectInvalid(
      await signWithActiveKey({ ...claims, aud: "someone-else" }),
      "the access token is meant for another audience",
    );
    await expectInvalid(
      await signWithActiveKey({ ...claims, iss: "https://evil.example" }),
      "the access token was issued by another issuer",
    );
  });

  it("refuses an expired token, and one without exp", async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectInvalid(
      await signWithActiveKey({ ...claims, iat: now - 1000, exp: now - 60 }),
      "the access token has expired",
    );
    const { exp: _exp, ...withoutExp } = claims;
    await expectInvalid(
      await signWithActiveKey(withoutExp),
      "the access token lacks the exp claim",
    );
  });

  it("remembers a verified token only until it expires", async () => {
    let clock = Date.now();
    const verify = createAccessTokenVerifier(
      identity.keys,
      { issuer: ISSUER, audience: AUDIENCE },
      { now: () => clock },
    );
    const exp = Math.floor(clock / 1000) + 60;
    const token = await signWithActiveKey({ ...claims, exp });
    const first = await verify(token);
    expect(first.accountId).toBe("acct_authn");
    // The same token again: the remembered verification, the same principal.
    expect(await verify(token)).toBe(first);
    // Past exp and the 5 s tolerance, the memory does not vouch for it any more.
    clock = (exp + 6) * 1000;
    const error = await verify(token).then(
      () => undefined,
      (e: unknown) => e as DomainError,
    );
    expect(error?.kind).toBe("invalid-token");
    expect(error?.detail).toBe("the access token has expired");
    // A token that differs by one character is verified on its own (and refused).
    clock = Date.now();
    const tampered = `${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}`;
    await expect(verify(tampered)).rejects.toMatchObject({ kind: "invalid-token" });
  });

  it("refuses a token signed by an unknown key", async () => {
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    for (const kid of ["key_01unknownunknownunknown0", undefined]) {
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: "EdDSA", typ: "at+jwt", ...(kid ? { kid } : {}) })
        .sign(privateKey);
      await expectInvalid(token, "the access token was signed by an unknown key");
    }
    // Our kid, another key's signature.
    const { kid } = await identity.keys.activeKey("access-token");
    const impostor = await new SignJWT(claims)
      .setProtectedHeader({ alg: "EdDSA", typ: "at+jwt", kid })
      .sign(privateKey);
    await expectInvalid(impostor, "the access token's signature is invalid");
  });

  it("refuses malformed claims even when signed", async () => {
    await expectInvalid(
      await signWithActiveKey({ ...claims, sub: "cli_someone_else" }),
      "the access token's claims are malformed",
    );
  });

  it("refuses a signed token whose account is not its client's account", async () => {
    await createAccount(pool, { id: "acct_other", name: "Other" });
    // The real key, the real client, another account: a forged binding, not a forged signature.
    await expectInvalid(
      await signWithActiveKey({ ...claims, account_id: "acct_other", jti: "forged-account" }),
      "the access token's account is not its client's",
    );
    await expectInvalid(
      await signWithActiveKey({ ...claims, account_id: "acct_nowhere", jti: "unknown-account" }),
      "the access token's account is not its client's",
    );
  });

  describe("service tokens", () => {
    it("accepts a live service token", async () => {
      const created = await createServiceToken(pool, {
        accountId: "acct_authn",
        scopes: ["usage:read", "numbers:read"],
      });
      const principal = await identity.authenticator.authenticate(`Bearer ${created.token}`);
      expect(principal).toEqual({
        accountId: "acct_authn",
        principalId: created.id,
        kind: "service_token",
        scopes: new Set(["numbers:read", "usage:read"]),
      });
    });

    it("refuses a revoked one", async () => {
      const created = await createServiceToken(pool, {
        accountId: "acct_authn",
        scopes: ["usage:read"],
      });
      await revokeServiceToken(pool, created.id);
      await expectInvalid(created.token, "the service token has been revoked");
    });

    it("refuses an expired one", async () => {
      const created = await createServiceToken(pool, {
        accountId: "acct_authn",
        scopes: ["usage:read"],
        expiresInSeconds: 3600,
      });
      await identity.authenticator.authenticate(`Bearer ${created.token}`);
      await pool.query(
        "UPDATE gateway.service_tokens SET expires_at = now() - interval '1 second' WHERE id = $1",
        [created.id],
      );
      await expectInvalid(created.token, "the service token has expired");
    });

    it("refuses an unknown or malformed one", async () => {
      const created = await createServiceToken(pool, {
        accountId: "acct_authn",
        scopes: ["usage:read"],
      });
      const last = created.token.at(-1) === "A" ? "B" : "A";
      await expectInvalid(
        `${created.token.slice(0, -1)}${last}`,
        "the service token is not recognized",
      );
      await expectInvalid(`sbt_${"A".repeat(43)}`, "the service token is not recognized");
      await expectInvalid("sbt_short", "the service token is malformed");
    });
  });

  it("requireScope refuses a missing permission with insufficient-scope", () => {
    const principal: Principal = {
      accountId: "acct_authn",
      principalId: "cli_x",
      kind: "client",
      scopes: new Set(["numbers:read"]),
    };
    expect(() => requireScope(principal, "numbers:read")).not.toThrow();
    let error: unknown;
    try {
      requireScope(principal, "numbers:write");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      kind: "insufficient-scope",
      detail: "this operation requires the scope numbers:write",
      meta: { extensions: { required_scope: "numbers:write" } },
    });
    expect(httpStatusOf((error as DomainError).kind)).toBe(403);
  });
});
