import type { PDU, PDUFields } from "smpp";
import type { Peer, Peers } from "./peers.js";

/**
 * What the SMSC does to an accepted submit instead of answering it (TestSmsc.faultSubmits). In
 * every case the submit is recorded as accepted, as a real SMSC would have taken it:
 * - `accept-then-drop`: no answer; the connection is closed (FIN after what was written);
 * - `slow-response`: the answer comes after `slowResponseMs` (if the connection still stands);
 * - `bad-length`: the answer is a PDU whose command_length (12) is shorter than its header;
 * - `zero-length`: the answer is a PDU header with command_length 0;
 * - `garbage`: the answer is a line of text, not SMPP at all.
 */
export type SubmitFault =
  "accept-then-drop" | "slow-response" | "bad-length" | "zero-length" | "garbage";

export const submitFaults: readonly SubmitFault[] = [
  "accept-then-drop",
  "slow-response",
  "bad-length",
  "zero-length",
  "garbage",
];

export const isSubmitFault = (name: string): name is SubmitFault =>
  (submitFaults as readonly string[]).includes(name);

/** The bytes a malformed fault writes in place of `response` (a submit_sm_resp). */
function malformed(fault: "bad-length" | "zero-length" | "garbage", response: PDU): Buffer {
  if (fault === "garbage") return Buffer.from("\xde\xad\xbe\xef this is not SMPP\r\n", "latin1");
  const encoded = response.toBuffer();
  encoded.writeUInt32BE(fault === "zero-length" ? 0 : 12, 0);
  return encoded;
}

/** Answers (or does not answer) an accepted submit as `fault` says. */
export function answerWithFault(
  fault: SubmitFault,
  context: { peers: Peers; peer: Peer; request: PDU; fields: PDUFields; slowResponseMs: number },
): void {
  const { peers, peer, request, fields } = context;
  peers.recordFault(peer, fault, request.sequence_number);
  switch (fault) {
    case "accept-then-drop":
      void peers.close(peer);
      return;
    case "slow-response":
      setTimeout(() => peers.reply(peer, request, fields), context.slowResponseMs).unref();
      return;
    default:
      if (!peer.dead) peer.session.socket.write(malformed(fault, request.response(fields)));
  }
}
