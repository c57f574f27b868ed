import { compactVerify, decodeProtectedHeader, exportJWK, generateKeyPair } from "jose";
import type { SigningKeyStore } from "@switchboard/kit";
import { cursorId, DomainError, encodeCursor, pageLimit } from "@switchboard/kit";
import { describe, expect, it } from "vitest";
import { accountHangup } from "../src/calls/hangup.js";
import { parseOutboundRequest } from "../src/calls/outbound-request.js";
import { unansweredStatusFor, hangupCauses } from "../src/calls/states.js";
import { sandboxScript } from "../src/carrier/sandbox/sandbox-script.js";
import { loadCallControlSettings } from "../src/config.js";
import { canonicalTn, PassportSigner } from "../src/stir-shaken/passport.js";
import { tnAuthListDer } from "../src/stir-shaken/tn-auth-list.js";

const timing = { ringDelayMs: 100, callSeconds: 2 };

describe("the sandbox network", () => {
  it("scripts each destination by its last digit", () => {
    const ends = (to: string) => sandboxScript(to, timing).find((s) => s.event === "ended");
    expect(sandboxScript("+15550100000", timing).map((s) => [s.event, s.afterMs])).toEqual([
      ["ringing", 100],
      ["answered", 200],
      ["ended", 2200],
    ]);
    expect(ends("+15550100000")).toMatchObject({
      hangup: { cause: "normal_clearing", source: "callee", sipCode: 200 },
    });
    expect(sandboxScript("+15550101111", timing)).toEqual([
      {
        event: "ended",
        afterMs: 100,
        hangup: { cause: "user_busy", source: "callee", sipCode: 486 },
      },
    ]);
    expect(ends("+15550102222")).toMatchObject({
      afterMs: 2100,
      hangup: { cause: "no_answer", sipCode: 480 },
    });
    expect(ends("+15550103333")).toMatchObject({
      afterMs: 100,
      hangup: { cause: "network_error", sipCode: 503 },
    });
    expect(ends("+15550104444")).toMatchObject({
      afterMs: 200,
      hangup: { cause: "call_rejected", sipCode: 603 },
    });
    // Other digits and other numbers answer and stay up.
    for (const to of ["+15550105555", "+15550109999", "+14155550100", "+155501000001"]) {
      expect(sandboxScript(to, timing).map((s) => s.event)).toEqual(["ringing", "answered"]);
    }
  });
});

describe("the state machine", () => {
  it("names a terminal status for every cause of an unanswered call", () => {
    const table = Object.fromEntries(
      hangupCauses.map((cause) => [cause, unansweredStatusFor(cause)]),
    );
    expect(table).toEqual({
      normal_clearing: "canceled",
      user_busy: "busy",
      no_answer: "no_answer",
      timeout: "no_answer",
      time_limit: "canceled",
      originator_cancel: "canceled",
      call_rejected: "rejected",
      no_route: "rejected",
      network_error: "failed",
      seat_unavailable: "failed",
    });
  });

  it("hangs up from the account's side of the call", () => {
    expect(accountHangup({ direction: "outbound", status: "ringing" })).toEqual({
      cause: "originator_cancel",
      source: "caller",
      sipCode: 487,
    });
    expect(accountHangup({ direction: "outbound", status: "in_progress" })).toMatchObject({
      cause: "normal_clearing",
      source: "caller",
    });
    expect(accountHangup({ direction: "inbound", status: "ringing" })).toEqual({
      cause: "call_rejected",
      source: "callee",
      sipCode: 603,
    });
    expect(accountHangup({ direction: "inbound", status: "in_progress" })).toMatchObject({
      cause: "normal_clearing",
      source: "callee",
    });
  });
});

describe("outbound requests", () => {
  const base = {
    accountId: "acct_a",
    to: "+15550100000",
    from: "+14155550100",
    agent: "alice",
  };

  it("applies defaults and fingerprints the request", () => {
    const a = parseOutboundRequest(base);
    expect(a).toMatchObject({ timeoutSeconds: 30, timeLimitSeconds: 14_400, seatId: undefined });
    expect(parseOutboundRequest({ ...base, timeoutSeconds: 30 }).fingerprint).toBe(a.fingerprint);
    expect(parseOutboundRequest({ ...base, to: "+15550100001" }).fingerprint).not.toBe(
      a.fingerprint,
    );
  });

  it("reports every bad field at once", () => {
    try {
      parseOutboundRequest({
        ...base,
        to: "x",
        agent: "",
        timeoutSeconds: 200,
        clientState: "x".repeat(1025),
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).meta.errors?.map((e) => e.pointer)).toEqual([
        "#/to",
        "#/agent",
        "#/timeout_seconds",
        "#/client_state",
      ]);
    }
  });
});

describe("cursors", () => {
  it("round-trip, and refuse tampering and other filters", () => {
    const id = "call_01jd0000000000000000000000";
    const cursor = encodeCursor("calls:acct_a:busy", [id]);
    expect(cursorId(cursor, "calls:acct_a:busy")).toBe(id);
    expect(cursorId("", "calls:acct_a:busy")).toBeUndefined();
    expect(() => cursorId(cursor, "calls:acct_a:completed")).toThrow(/different filters/);
    expect(() => cursorId(`${cursor}x`, "calls:acct_a:busy")).toThrow(/malformed/);
    expect(() => cursorId("nonsense", "x")).toThrow(DomainError);
    expect(pageLimit(0)).toBe(50);
    expect(() => pageLimit(201)).toThrow(DomainError);
  });
});

describe("STIR/SHAKEN", () => {
  it("names one x5u: PUBLIC_URL, else the gateway's local address, + the certificate path", () => {
    expect(loadCallControlSettings({ PUBLIC_URL: "https://sb.example/" }).certificateUrl).toBe(
      "https://sb.example/.well-known/stir-shaken/cert.pem",
    );
    expect(loadCallControlSettings({ PORT: "18080" }).certificateUrl).toBe(
      "http://localhost:18080/.well-known/stir-shaken/cert.pem",
    );
  });

  it("encodes the TNAuthList extension with the SPC (RFC 8226, explicit tags)", () => {
    expect(Buffer.from(tnAuthListDer("SWBD")).toString("hex")).toBe("3008a00616045357424" + "4");
    expect(() => tnAuthListDer("")).toThrow(TypeError);
  });

  it("signs a SHAKEN PASSporT with ES256 in canonical form", async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    const keys = {
      activeKey: async () => ({ kid: "key_1", purpose: "passport", alg: "ES256", privateKey }),
    };
    const signer = new PassportSigner(keys as unknown as SigningKeyStore);
    const { identity, origid } = await signer.sign({
      attest: "A",
      from: "+14155550100",
      to: "+15550100000",
      x5u: "https://sb.example/.well-known/stir-shaken/cert.pem",
    });
    const [header, payload] = identity
      .split(".")
      .map((part) => Buffer.from(part, "base64url").toString());
    expect(header).toBe(
      '{"alg":"ES256","ppt":"shaken","typ":"passport","x5u":"https://sb.example/.well-known/stir-shaken/cert.pem"}',
    );
    expect(payload).toMatch(
      /^\{"attest":"A","dest":\{"tn":\["15550100000"\]\},"iat":\d+,"orig":\{"tn":"14155550100"\},"origid":"[0-9a-f-]{36}"\}$/,
    );
    expect(JSON.parse(payload!).origid).toBe(origid);
    await expect(compactVerify(identity, publicKey)).resolves.toBeTruthy();
    expect(decodeProtectedHeader(identity).alg).toBe("ES256");
    expect((await exportJWK(publicKey)).crv).toBe("P-256");
    expect(canonicalTn("+442071838750")).toBe("442071838750");
  });
});
