/**
 * Message framing on a stream (TCP, TLS; RFC 3261 §18.3): a message is its header block up to
 * the first empty line, then exactly Content-Length bytes of body. Several messages may come in
 * one chunk and one message in several; CRLFs between messages are keep-alives (RFC 5626 §3.5.1:
 * a double CRLF is answered with one CRLF).
 */
export type FramedUnit =
  /** One whole message: its header block and body, as the bytes came. */
  | { kind: "message"; bytes: Buffer }
  /** A double-CRLF keep-alive ping (RFC 5626 §3.5.1): answer with one CRLF. */
  | { kind: "ping" }
  /**
   * The stream cannot be framed any further (it must be closed after this): a header block
   * without Content-Length (`missing-length`) or with one that is not a byte count
   * (`bad-length`), a body longer than allowed (`too-large`: `head` holds the header block, so a
   * request can be answered before the close), or a header block that never ends (`overflow`).
   */
  | { kind: "unframeable"; reason: "missing-length" | "bad-length" | "too-large"; head: Buffer }
  | { kind: "unframeable"; reason: "overflow" };

export interface StreamFramer {
  /** Takes the next bytes of the stream; returns the units they complete, in order. */
  push(chunk: Buffer): FramedUnit[];
}

const crlf = 0x0d0a;
const headerEnd = Buffer.from("\r\n\r\n", "latin1");

/**
 * The framer of one stream: a message of more than `maxMessageBytes` (header block and body) is
 * refused; after an `unframeable` unit it takes nothing more.
 */
export function createStreamFramer(maxMessageBytes: number): StreamFramer {
  let buffered: Buffer = Buffer.alloc(0);
  let broken = false;

  return {
    push(chunk) {
      if (broken) return [];
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const units: FramedUnit[] = [];
      for (;;) {
        // Leading CRLFs: keep-alives between messages.
        let start = 0;
        while (buffered.length - start >= 2 && buffered.readUInt16BE(start) === crlf) {
          if (buffered.length - start >= 4 && buffered.readUInt32BE(start) === 0x0d0a0d0a) {
            units.push({ kind: "ping" });
            start += 4;
          } else {
            start += 2;
          }
        }
        if (start > 0) buffered = buffered.subarray(start);
        if (buffered.length === 0) return units;
        const end = buffered.indexOf(headerEnd);
        if (end < 0) {
          if (buffered.length > maxMessageBytes)
            return stop(units, { kind: "unframeable", reason: "overflow" });
          return units;
        }
        const head = buffered.subarray(0, end);
        const length = contentLength(head.toString("latin1"));
        if (length === undefined || length === "bad") {
          const reason = length === undefined ? "missing-length" : "bad-length";
          return stop(units, { kind: "unframeable", reason, head: Buffer.from(head) });
        }
        const total = end + 4 + length;
        if (total > maxMessageBytes) {
          return stop(units, { kind: "unframeable", reason: "too-large", head: Buffer.from(head) });
        }
        if (buffered.length < total) return units;
        units.push({ kind: "message", bytes: Buffer.from(buffered.subarray(0, total)) });
        buffered = buffered.subarray(total);
      }
    },
  };

  function stop(units: FramedUnit[], last: FramedUnit): FramedUnit[] {
    broken = true;
    buffered = Buffer.alloc(0);
    return [...units, last];
  }
}

/**
 * The Content-Length of a header block (its long or compact name `l`, RFC 3261 §7.3.3): a
 * number of bytes, undefined when absent, "bad" when not a byte count or given twice with two
 * values.
 */
export function contentLength(head: string): number | "bad" | undefined {
  let found: number | undefined;
  for (const line of head.split("\r\n").slice(1)) {
    const match = /^(content-length|l)[ \t]*:[ \t]*(.*?)[ \t]*$/i.exec(line);
    if (!match) continue;
    if (!/^\d{1,9}$/.test(match[2]!)) return "bad";
    const value = Number(match[2]);
    if (found !== undefined && found !== value) return "bad";
    found = value;
  }
  return found;
}
