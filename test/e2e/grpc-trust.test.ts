import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkHealth,
  createHealthClient,
  CREDENTIAL_METADATA,
  createLogger,
  grpcServerCredentials,
  INTERNAL_ISSUER,
  internalKey,
  mintInternalCredential,
  startGrpcServer,
} from "@switchboard/kit";
import { usage, webhook } from "@switchboard/proto";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

type Unary<Req, Res> = (
  request: Req,
  metadata: Metadata,
  callback: (error: ServiceError | null, response: Res) => void,
) => unknown;

/** Calls a method as a plain script on the host would: a raw client, metadata of our choosing. */
const rawCall = <Req, Res>(method: Unary<Req, Res>, client: object, request: Req, token?: string) =>
  new Promise<{ code: number; response?: Res }>((resolve) => {
    const metadata = new Metadata();
    if (token) metadata.set(CREDENTIAL_METADATA, token);
    method.call(client, request, metadata, (error, response) =>
      resolve(error ? { code: error.code } : { code: status.OK, response }),
    );
  });

const signed = (key: Uint8Array, claims: { aud: string; acct: string; exp?: number }) =>
  new SignJWT({ acct: claims.acct })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(INTERNAL_ISSUER)
    .setAudience(claims.aud)
    .setSubject("script")
    .setIssuedAt()
    .setExpirationTime(claims.exp ?? "60s")
    .sign(key);

/**
 * docs/architecture.md rule 10: no service trusts whoever reaches it. A gRPC call needs an internal credential for
 * that service, and the account a call acts for is the credential's, so one account's records
 * and webhook URLs cannot be read by naming it in a request.
 */
describe("gRPC services trust credentials, not the network", () => {
  let p: TestPlatform;
  let usageClient: usage.UsageServiceClient;
  let webhookClient: webhook.WebhookServiceClient;
  const victim = "acct_victim";

  beforeAll(async () => {
    p = await startTestPlatform({ database: "postgres", seed: 10, contract: "off" });
    // The victim has usage records and a webhook subscription with a secret in its URL.
    const token = await p.token();
    await p.request("/v1/api/agents", { token });
    const address = (name: string) => `127.0.0.1:${p.platform.services[name]!.port}`;
    usageClient = new usage.UsageServiceClient(address("usage"), credentials.createInsecure());
    webhookClient = new webhook.WebhookServiceClient(
      address("webhook"),
      credentials.createInsecure(),
    );
    const asVictim = await mintInternalCredential({
      audience: "webhook",
      accountId: victim,
      principal: "test",
    });
    const made = await rawCall(
      webhookClient.createSubscription,
      webhookClient,
      { accountId: victim, url: "https://hooks.example.com/x?token=s3cret", events: ["*"] },
      asVictim,
    );
    expect(made.code).toBe(status.OK);
  });
  afterAll(async () => {
    usageClient?.close();
    webhookClient?.close();
    await p?.stop();
  });

  const listSubscriptions = (token?: string, accountId = victim) =>
    rawCall(
      webhookClient.listSubscriptions,
      webhookClient,
      { accountId, limit: 10, cursor: "" },
      token,
    );
  const listUsage = (token?: string, accountId = victim) =>
    rawCall(
      usageClient.listUsageEvents,
      usageClient,
      usage.ListUsageEventsRequest.fromPartial({ accountId, limit: 10 }),
      token,
    );

  it("refuses a call with no credential (a plain script on the same host)", async () => {
    expect((await listUsage()).code).toBe(status.UNAUTHENTICATED);
    expect((await listSubscriptions()).code).toBe(status.UNAUTHENTICATED);
  });

  it("refuses a forged credential, an expired one and one for another service", async () => {
    const forged = await signed(new TextEncoder().encode("x".repeat(32)), {
      aud: "usage",
      acct: victim,
    });
    expect((await listUsage(forged)).code).toBe(status.UNAUTHENTICATED);
    const key = new Uint8Array(internalKey("grpc-credential"));
    const expired = await signed(key, {
      aud: "usage",
      acct: victim,
      exp: Math.floor(Date.now() / 1000) - 60,
    });
    expect((await listUsage(expired)).code).toBe(status.UNAUTHENTICATED);
    const forWebhook = await mintInternalCredential({
      audience: "webhook",
      accountId: victim,
      principal: "test",
    });
    expect((await listUsage(forWebhook)).code).toBe(status.UNAUTHENTICATED);
    const none = await signed(key, { aud: "usage", acct: victim }).then((t) => `${t}x`);
    expect((await listUsage(none)).code).toBe(status.UNAUTHENTICATED);
  });

  it("refuses a request naming another account than its credential's: the cross-account read is impossible", async () => {
    const asAttacker = (audience: string) =>
      mintInternalCredential({ audience, accountId: p.accountId, principal: "attacker" });
    expect((await listUsage(await asAttacker("usage"))).code).toBe(status.PERMISSION_DENIED);
    expect((await listSubscriptions(await asAttacker("webhook"))).code).toBe(
      status.PERMISSION_DENIED,
    );
  });

  it("serves a valid credential, taking the account from it when the request names none", async () => {
    const asVictim = await mintInternalCredential({
      audience: "webhook",
      accountId: victim,
      principal: "test",
    });
    const own = await listSubscriptions(asVictim, "");
    expect(own.code).toBe(status.OK);
    expect(
      (own.response as webhook.ListSubscriptionsResponse).subscriptions.map((s) => s.url),
    ).toEqual(["https://hooks.example.com/x?token=s3cret"]);
    const asOwner = await mintInternalCredential({
      audience: "usage",
      accountId: p.accountId,
      principal: "test",
    });
    expect((await listUsage(asOwner, p.accountId)).code).toBe(status.OK);
  });
});

describe("gRPC over mutual TLS", () => {
  const dir = mkdtempSync(join(tmpdir(), "switchboard-tls-"));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });

  beforeAll(() => {
    openssl(
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      file("ca.key"),
      "-out",
      file("ca.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=test-ca",
    );
    writeFileSync(file("ext"), "subjectAltName=DNS:switchboard.internal,IP:127.0.0.1\n");
    for (const name of ["server", "client"]) {
      openssl(
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        file(`${name}.key`),
        "-out",
        file(`${name}.csr`),
        "-subj",
        `/CN=${name}`,
      );
      openssl(
        "x509",
        "-req",
        "-in",
        file(`${name}.csr`),
        "-CA",
        file("ca.pem"),
        "-CAkey",
        file("ca.key"),
        "-CAcreateserial",
        "-out",
        file(`${name}.pem`),
        "-days",
        "1",
        "-extfile",
        file("ext"),
      );
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves a client with a certificate the CA signed, and refuses one without", async () => {
    const server = await startGrpcServer({
      name: "usage",
      services: [],
      port: 0,
      logger: createLogger("tls-test", { level: "silent" }),
      credentials: grpcServerCredentials({
        cert: file("server.pem"),
        key: file("server.key"),
        ca: file("ca.pem"),
      }),
    });
    try {
      const address = `127.0.0.1:${server.port}`;
      const mutual = createHealthClient(address, {
        ca: file("ca.pem"),
        cert: file("client.pem"),
        key: file("client.key"),
        serverName: "switchboard.internal",
      });
      expect(await checkHealth(mutual)).toBe("SERVING");
      mutual.close();
      const noCertificate = createHealthClient(address, {
        ca: file("ca.pem"),
        serverName: "switchboard.internal",
      });
      expect(await checkHealth(noCertificate)).toBe("UNREACHABLE");
      noCertificate.close();
      const plaintext = createHealthClient(address, {});
      expect(await checkHealth(plaintext)).toBe("UNREACHABLE");
      plaintext.close();
    } finally {
      await server.drain(100);
    }
  });
});
