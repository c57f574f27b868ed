import { describe, expect, it } from "vitest";
import {
  contentLength,
  createStreamFramer,
  type FramedUnit,
} from "../src/sip/stack/stream-framer.js";

const message = (
  branch: string,
  body = "",
  lengthHeader = `Content-Length: ${Buffer.byteLength(body)}`,
) =>
  [
    `OPTIONS sip:127.0.0.1 SIP/2.0`,
    `Via: SIP/2.0/TCP 127.0.0.1:9;branch=${branch}`,
    "From: <sip:probe@127.0.0.1>;tag=p1",
    "To: <sip:probe@127.0.0.1>",
    `Call-ID: ${branch}@test`,
    "CSeq: 1 OPTIONS",
    ...(lengthHeader ? [lengthHeader] : []),
    "",
    body,
  ].join("\r\n");

const texts = (units: FramedUnit[]) =>
  units.map((unit) => (unit.kind === "message" ? unit.bytes.toString("latin1") : unit.kind));

/** RFC 3261 §18.3: messages on a stream are framed by their Content-Length. */
describe("stream framing (TCP, TLS)", () => {
  it("takes two messages coalesced in one chunk, bodies included", () => {
    const first = message("z9hG4bK1", "v=0\r\n");
    const second = message("z9hG4bK2");
    const framer = createStreamFramer(16 * 1024);
    expect(texts(framer.push(Buffer.from(first + second)))).toEqual([first, second]);
  });

  it("takes one message split over many chunks, a split inside the header end and the body too", () => {
    const whole = message("z9hG4bK3", "héllo body");
    const bytes = Buffer.from(whole, "utf8");
    const framer = createStreamFramer(16 * 1024);
    const cuts = [5, bytes.indexOf("\r\n\r\n") + 2, bytes.length - 3, bytes.length];
    const units: FramedUnit[] = [];
    let from = 0;
    for (const cut of cuts) {
      units.push(...framer.push(bytes.subarray(from, cut)));
      if (cut < bytes.length) expect(units).toEqual([]);
      from = cut;
    }
    expect(units).toHaveLength(1);
    expect((units[0] as { bytes: Buffer }).bytes.equals(bytes)).toBe(true);
  });

  it("counts the body in bytes (a multi-byte character is two), and keeps what follows for the next message", () => {
    const framer = createStreamFramer(16 * 1024);
    const first = message("z9hG4bK4", "é");
    const next = message("z9hG4bK5");
    const units = framer.push(
      Buffer.concat([Buffer.from(first, "utf8"), Buffer.from(next.slice(0, 30))]),
    );
    expect(units).toHaveLength(1);
    expect(texts(framer.push(Buffer.from(next.slice(30))))).toEqual([next]);
  });

  it("answers a double-CRLF keep-alive with a ping and skips single CRLFs between messages", () => {
    const framer = createStreamFramer(16 * 1024);
    const one = message("z9hG4bK6");
    expect(texts(framer.push(Buffer.from(`\r\n\r\n${one}\r\n`)))).toEqual(["ping", one]);
  });

  it("refuses a header block without Content-Length, and takes nothing after it", () => {
    const framer = createStreamFramer(16 * 1024);
    const units = framer.push(Buffer.from(message("z9hG4bK7", "", "") + message("z9hG4bK8")));
    expect(units).toHaveLength(1);
    expect(units[0]).toMatchObject({ kind: "unframeable", reason: "missing-length" });
    expect((units[0] as { head: Buffer }).head.toString()).toContain("branch=z9hG4bK7");
    expect(framer.push(Buffer.from(message("z9hG4bK9")))).toEqual([]);
  });

  it("refuses a body over the size limit before reading it, and a Content-Length that is no byte count", () => {
    const big = createStreamFramer(1024);
    expect(big.push(Buffer.from(message("z9hG4bKa", "", "Content-Length: 5000")))).toMatchObject([
      { kind: "unframeable", reason: "too-large" },
    ]);
    const bad = createStreamFramer(1024);
    expect(bad.push(Buffer.from(message("z9hG4bKb", "", "l: -4")))).toMatchObject([
      { kind: "unframeable", reason: "bad-length" },
    ]);
  });

  it("closes a stream whose header block never ends", () => {
    const framer = createStreamFramer(1024);
    expect(framer.push(Buffer.from(`OPTIONS sip:x SIP/2.0\r\nX: ${"a".repeat(2000)}`))).toEqual([
      { kind: "unframeable", reason: "overflow" },
    ]);
  });

  it("reads Content-Length by its long and compact names, refusing two different values", () => {
    expect(contentLength("INVITE sip:x SIP/2.0\r\ncontent-length : 12")).toBe(12);
    expect(contentLength("INVITE sip:x SIP/2.0\r\nl: 3")).toBe(3);
    expect(contentLength("INVITE sip:x SIP/2.0\r\nVia: x")).toBeUndefined();
    expect(contentLength("INVITE sip:x SIP/2.0\r\nContent-Length: 1\r\nl: 2")).toBe("bad");
  });
});
