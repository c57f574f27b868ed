import { describe, expect, it } from "vitest";
import { findSecrets } from "@switchboard/test-support/secret-patterns";

const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ level: 30, service: "gateway", msg: "x", ...fields });

describe("the log scan run at the end of every test run", () => {
  it("finds credentials by their shape and unredacted secret or message fields", () => {
    const jwt = `eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJjbGlfdGVzdCJ9.${"s".repeat(40)}`;
    const lines = [
      line({ note: `token ${jwt}` }),
      line({ header: `Bearer ${"a".repeat(30)}` }),
      line({ header: `Basic ${Buffer.from("cli_x:sbcs_secretvalue123").toString("base64")}` }),
      line({ note: `sbt_${"b".repeat(43)}` }),
      line({ note: `sbcs_${"c".repeat(43)}` }),
      line({ note: `whsec_${"d".repeat(32)}` }),
      line({ note: `sbsip_${"e".repeat(24)}` }),
      line({ sip: `Authorization: Digest username="seat_x", response="${"f".repeat(64)}"` }),
      line({ body: "Your code is 123456" }),
      line({ message: { text: "hello" } }),
    ];
    const names = findSecrets("gateway.ndjson", lines.join("\n")).map((f) => f.name);
    expect(names).toEqual([
      "access token (JWT)",
      "bearer credentials",
      "basic credentials",
      "service token",
      "client secret",
      "webhook secret",
      "SIP password",
      "SIP digest credentials",
      "unredacted secret or message field",
      "unredacted secret or message field",
    ]);
  });

  it("passes redacted fields and ordinary lines", () => {
    const lines = [
      line({ body: "[redacted]", req: { authorization: "[redacted]" } }),
      line({ token_type: "Bearer", route: "/v1/api/calls", status: 201 }),
      line({ kid: "key_01JX", hint: "sbt_…abcd" }),
    ];
    expect(findSecrets("gateway.ndjson", lines.join("\n"))).toEqual([]);
  });
});
