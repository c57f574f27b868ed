import { isIPv6 } from "node:net";
import { Client, type NgReply, type NgRequest } from "rtpengine-client";

/** Where rtpengine's ng control protocol listens (`SIP_RTP_RELAY`). */
export interface RtpRelayAddress {
  host: string;
  port: number;
}

export interface RtpRelayOptions extends RtpRelayAddress {
  /** How long one ng request waits for its reply before it is sent again. */
  timeoutMs?: number;
  /** Sends of one request before the relay is reported unavailable. */
  attempts?: number;
}

/** One side's SDP: its dialog's Call-ID and tags name the media session in the relay. */
export interface RelayedDescription {
  callId: string;
  fromTag: string;
  sdp: string;
  /** Where the side's SIP came from: media is expected there rather than at a private SDP address. */
  receivedFrom?: string;
}

/**
 * The RTP profile the relay gives the answerer (an offer's `transport-protocol`): RTP/SAVP with
 * SDES keys (RFC 4568) for a phone on TLS, plain RTP/AVP otherwise; rtpengine translates
 * between the two, and gives the offerer back its own profile in the answer.
 */
export type RelayProfile = "RTP/AVP" | "RTP/SAVP";

export interface RtpRelay {
  /**
   * The offer rewritten so that the answerer sends its media to the relay, in `profile` (left
   * as offered when absent).
   */
  offer(description: RelayedDescription & { profile?: RelayProfile }): Promise<string>;
  /** The answer (`toTag`: the answerer's tag) rewritten so that the offerer sends to the relay. */
  answer(description: RelayedDescription & { toTag: string }): Promise<string>;
  /** Ends the media session at once; a session the relay no longer knows is already released. */
  release(callId: string): Promise<void>;
  close(): void;
}

export class RtpRelayError extends Error {
  override name = "RtpRelayError";
}

/**
 * Media anchoring through an rtpengine daemon (ng protocol over UDP, `rtpengine-client`): each
 * SDP that crosses Switchboard is handed to the relay and the rewritten one is sent on, so both
 * sides send RTP to rtpengine, which learns each side's real address from its first packets
 * (symmetric RTP) and so reaches phones behind a NAT. Requests are retried on timeout: rtpengine
 * answers a repeated offer or answer of the same session with the same ports.
 */
export function createRtpRelay(options: RtpRelayOptions): RtpRelay {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const attempts = Math.max(1, options.attempts ?? 3);
  const client = new Client({ timeout: timeoutMs });

  const send = async (
    command: "offer" | "answer" | "delete",
    request: NgRequest,
  ): Promise<NgReply> => {
    let lastError: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        return await client[command](options.port, options.host, request);
      } catch (error) {
        lastError = error;
      }
    }
    throw new RtpRelayError(
      `the RTP relay did not answer ${command} (${attempts} tries): ${String(lastError)}`,
    );
  };

  const rewrite = async (command: "offer" | "answer", request: NgRequest): Promise<string> => {
    const reply = await send(command, request);
    if (reply.result !== "ok" || typeof reply.sdp !== "string") {
      throw new RtpRelayError(
        `the RTP relay refused the ${command}: ${reply["error-reason"] ?? reply.result}`,
      );
    }
    return reply.sdp;
  };

  const sessionOf = (description: RelayedDescription): NgRequest => ({
    "call-id": description.callId,
    "from-tag": description.fromTag,
    sdp: description.sdp,
    replace: ["origin", "session-connection"],
    ICE: "remove",
    ...(description.receivedFrom
      ? { "received-from": receivedFrom(description.receivedFrom), flags: ["SIP-source-address"] }
      : {}),
  });

  return {
    offer: (description) =>
      rewrite("offer", {
        ...sessionOf(description),
        ...(description.profile ? { "transport-protocol": description.profile } : {}),
        // SDES keys only: no DTLS-SRTP fingerprint offered to a phone that asked for neither.
        ...(description.profile === "RTP/SAVP" ? { DTLS: "off" } : {}),
      }),
    answer: (description) =>
      rewrite("answer", { ...sessionOf(description), "to-tag": description.toTag }),
    async release(callId) {
      // No delete delay (rtpengine keeps a deleted call 30 s by default): its ports go back now.
      const reply = await send("delete", { "call-id": callId, "delete-delay": 0 });
      if (reply.result === "ok") return;
      // rtpengine says "Unknown call-id" of a session already gone (deleted, or timed out).
      if (/unknown call/i.test(String(reply["error-reason"] ?? ""))) return;
      throw new RtpRelayError(`the RTP relay refused the delete: ${reply["error-reason"]}`);
    },
    close: () => client.close(),
  };
}

/** ng's `received-from`: the address family (`IP4`, `IP6`) and the address SIP came from. */
export const receivedFrom = (address: string): [string, string] => [
  isIPv6(address) ? "IP6" : "IP4",
  address,
];
