import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, newId } from "../src/index.js";
import { kindOf } from "@switchboard/test-support/grpc";

/** A cursor as a client could build one, with the old unkeyed checksum (SHA-256, truncated). */
const unkeyed = (position: unknown[], binding = "binding", version = 2) => {
  const digest = (text: string, length: number) =>
    createHash("sha256").update(text).digest("base64url").slice(0, length);
  const body = JSON.stringify([version, digest(binding, 16), ...position]);
  return `${Buffer.from(body).toString("base64url")}.${digest(body, 8)}`;
};

describe("signed cursors (kit)", () => {
  const id = newId("use");

  it("round-trip a position of every kind", () => {
    const token = encodeCursor("binding", ["+14155550123"]);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(decodeCursor(token, "binding", ["e164"])).toEqual(["+14155550123"]);
    const two = encodeCursor("list", ["2026-11-21T10:00:00.123456Z", id]);
    expect(decodeCursor(two, "list", ["instant", "id"])).toEqual([
      "2026-11-21T10:00:00.123456Z",
      id,
    ]);
  });

  it("refuse garbage, tampering and a forged checksum", () => {
    const token = encodeCursor("binding", ["+14155550123"]);
    const [body, tag] = token.split(".") as [string, string];
    const altered = Buffer.from(
      Buffer.from(body, "base64url").toString().replace("0123", "9999"),
    ).toString("base64url");
    for (const bad of [
      "garbage",
      "",
      `${altered}.${tag}`,
      `${body}.AAAAAAAAAAAAAAAAAAAAAA`,
      `${body}.${tag}.x`,
      `${body.slice(1)}.${tag}`,
      "!!!.???",
      unkeyed(["+14155550199"]),
    ]) {
      expect(
        kindOf(() => decodeCursor(bad, "binding", ["e164"])),
        bad,
      ).toBe("invalid-cursor");
    }
  });

  it("are bound to their filters and their shape", () => {
    const token = encodeCursor("a", [id]);
    expect(kindOf(() => decodeCursor(token, "b", ["id"]))).toBe("invalid-cursor");
    expect(kindOf(() => decodeCursor(token, "a", ["instant", "id"]))).toBe("invalid-cursor");
  });

  // Positions the platform itself would never write: even validly signed (a leaked key, a bug),
  // none reaches SQL.
  it.each([
    ["instant", "2026"],
    ["instant", "2026-02-30T00:00:00.000000Z"],
    ["instant", "2026-11-21T25:00:00.000000Z"],
    ["instant", "2026-11-21 10:00:00"],
    ["id", "use_\u0000"],
    ["id", "x"],
    ["id", `${id}'--`],
    ["e164", "+1415555012\u0000"],
  ] as const)("refuse a %s position %j", (kind, value) => {
    const token = encodeCursor("binding", [value]);
    expect(kindOf(() => decodeCursor(token, "binding", [kind]))).toBe("invalid-cursor");
  });
});
