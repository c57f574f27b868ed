import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { backoffDelay, ConfigError } from "@switchboard/kit";
import { loadWebhookSettings } from "../src/config.js";
import { patternProblem, subscribesTo, webhookEventTypes } from "../src/event-catalog.js";
import { errorClass, pinnedLookup, statusClass } from "../src/http-sender.js";
import { parseRetryAfter } from "../src/retry-after.js";
import { createSecretBox } from "../src/secret-box.js";
import {
  newSigningSecret,
  secretKey,
  sign,
  signedHeaders,
  verifySignature,
} from "../src/signature.js";

describe("Standard Webhooks signing", () => {
  const body = JSON.stringify({ id: "evt_1", type: "webhook.test", data: { a: "é" } });

  it("matches the standardwebhooks library, and verifies with it", () => {
    const secret = newSigningSecret();
    const at = new Date("2026-11-21T10:00:00Z");
    const headers = signedHeaders([secretKey(secret)], "evt_1", body, at);
    const library = new Webhook(secret);
    expect(headers["webhook-signature"]).toBe(library.sign("evt_1", at, body));
    expect(headers["webhook-timestamp"]).toBe(String(at.getTime() / 1000));
    const fresh = signedHeaders([secretKey(secret)], "evt_1", body);
    expect(library.verify(body, { ...fresh })).toEqual(JSON.parse(body));
  });

  it("matches the specification's example", () => {
    // https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
    const key = secretKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    const payload = '{"test": 2432232314}';
    expect(sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, payload)).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });

  it("signs with every key in force, newest first", () => {
    const [a, b] = [newSigningSecret(), newSigningSecret()];
    const headers = signedHeaders([secretKey(b), secretKey(a)], "evt_2", body);
    const parts = headers["webhook-signature"].split(" ");
    expect(parts).toHaveLength(2);
    for (const secret of [a, b])
      expect(() => new Webhook(secret).verify(body, { ...headers })).not.toThrow();
    const check = {
      id: "evt_2",
      timestamp: headers["webhook-timestamp"],
      signature: headers["webhook-signature"],
    };
    expect(verifySignature([secretKey(a)], check, body)).toBe(true);
    expect(verifySignature([secretKey(newSigningSecret())], check, body)).toBe(false);
    expect(verifySignature([secretKey(a)], check, `${body} `)).toBe(false);
    expect(verifySignature([secretKey(a)], { ...check, timestamp: "1000" }, body)).toBe(false);
  });

  it("secrets are whsec_ + base64 of 32 random bytes", () => {
    const secret = newSigningSecret();
    expect(secretKey(secret)).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
    expect(() => secretKey("sk_nope")).toThrow();
    expect(() => secretKey("whsec_c2hvcnQ=")).toThrow();
  });
});

describe("secret box", () => {
  it("seals per subscription; another subscription or key cannot open it", async () => {
    const box = await createSecretBox("a-test-secret-that-is-long-enough-000");
    const sealed = box.seal("whsec_abc", "whs_1");
    expect(sealed).not.toContain("whsec_abc");
    expect(box.open(sealed, "whs_1")).toBe("whsec_abc");
    expect(() => box.open(sealed, "whs_2")).toThrow(/cannot be opened/);
    const other = await createSecretBox("another-secret-that-is-long-enough-11");
    expect(() => other.open(sealed, "whs_1")).toThrow(/SIGNING_KEY_SECRET/);
    expect(() => box.open("v2.x", "whs_1")).toThrow(/unreadable/);
  });
});

describe("event catalog", () => {
  it("accepts catalog types, known prefixes and *; refuses the rest", () => {
    expect(patternProblem("*")).toBeUndefined();
    expect(patternProblem("call.*")).toBeUndefined();
    expect(patternProblem("message.delivered")).toBeUndefined();
    expect(patternProblem("webhook.delivered")).toBe("unknown event type webhook.delivered");
    expect(patternProblem("sms.*")).toMatch(/^no events start with sms\./);
    expect(patternProblem("call")).toBe("unknown event type call");
    expect(webhookEventTypes).toContain("webhook.subscription_disabled");
  });

  it("matches wildcards", () => {
    expect(subscribesTo(["call.*"], "call.answered")).toBe(true);
    expect(subscribesTo(["call.*"], "callback.x")).toBe(false);
    expect(subscribesTo(["*"], "number.held")).toBe(true);
    expect(subscribesTo(["message.sent"], "message.delivered")).toBe(false);
    expect(subscribesTo([], "number.held")).toBe(false);
  });
});

describe("delivery outcomes", () => {
  it("classifies statuses and transport errors without leaking details", () => {
    expect([200, 204, 299].map(statusClass)).toEqual(["delivered", "delivered", "delivered"]);
    expect(statusClass(301)).toBe("redirect");
    expect(statusClass(410)).toBe("gone");
    expect(statusClass(429)).toBe("http_status");
    expect(statusClass(503)).toBe("http_status");
    const coded = (code: string) => Object.assign(new Error("x"), { code });
    expect(errorClass(coded("ECONNREFUSED"))).toBe("connection_refused");
    expect(errorClass(coded("ECONNRESET"))).toBe("connection_reset");
    expect(errorClass(coded("DEPTH_ZERO_SELF_SIGNED_CERT"))).toBe("tls_error");
    expect(errorClass(coded("ERR_TLS_CERT_ALTNAME_INVALID"))).toBe("tls_error");
    expect(errorClass(coded("EHOSTUNREACH"))).toBe("unreachable");
    expect(errorClass(new Error("?"))).toBe("network_error");
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Sat, 21 Nov 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sat, 21 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-5", now)).toBeUndefined();
  });

  it("the pinned lookup answers only with the checked addresses", async () => {
    const lookup = pinnedLookup({
      url: new URL("https://hooks.example"),
      hostname: "hooks.example",
      exempt: false,
      addresses: [
        { address: "93.184.215.14", family: 4 },
        { address: "2606:2800::1", family: 6 },
      ],
    }) as unknown as (h: string, o: object, cb: (...args: unknown[]) => void) => void;
    const ask = (options: object) =>
      new Promise<unknown[]>((resolve) => lookup("evil.example", options, (...a) => resolve(a)));
    expect(await ask({ all: true })).toEqual([
      null,
      [
        { address: "93.184.215.14", family: 4 },
        { address: "2606:2800::1", family: 6 },
      ],
    ]);
    expect(await ask({ family: 6 })).toEqual([null, "2606:2800::1", 6]);
    expect(await ask({})).toEqual([null, "93.184.215.14", 4]);
  });

  it("the default schedule is docs/api.md's, and jitter only ever shortens a delay", () => {
    const settings = loadWebhookSettings({});
    expect(settings.retryDelaysMs).toEqual(
      [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400].map((s) => s * 1000),
    );
    expect(settings.timeoutMs).toBe(10_000);
    const schedule = { type: "schedule" as const, delaysMs: settings.retryDelaysMs, jitter: 0.2 };
    expect(backoffDelay(schedule, 1, 0, () => 0)).toBe(5_000);
    expect(backoffDelay(schedule, 1, 0, () => 1)).toBe(4_000);
    expect(backoffDelay(schedule, 2, 60_000_000, () => 1)).toBe(60_000_000);
  });
});

describe("configuration", () => {
  it("reads the environment and fails fast naming the variable", () => {
    const settings = loadWebhookSettings({
      WEBHOOK_ALLOW_PRIVATE_HOSTS: "LocalHost, 10.0.0.5 ,",
      WEBHOOK_RETRY_SCHEDULE: "50ms,1s",
      WEBHOOK_DISABLE_AFTER: "3d",
    });
    expect(settings.allowPrivateHosts).toEqual(["localhost", "10.0.0.5"]);
    expect(settings.retryDelaysMs).toEqual([50, 1000]);
    expect(settings.disableAfterMs).toBe(3 * 86_400_000);
    expect(() => loadWebhookSettings({ WEBHOOK_RETRY_SCHEDULE: "5 minutes" })).toThrow(
      /WEBHOOK_RETRY_SCHEDULE/,
    );
    expect(() => loadWebhookSettings({ WEBHOOK_TIMEOUT_MS: "0" })).toThrow(ConfigError);
    expect(() => loadWebhookSettings({ NODE_ENV: "production" })).toThrow(/SIGNING_KEY_SECRET/);
  });
});
