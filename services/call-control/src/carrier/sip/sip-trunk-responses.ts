import type { Logger } from "@switchboard/kit";
import { fromDialogPeerAddress } from "../../sip/dialogs/dialog-peer.js";
import { flowOf, type Dialog } from "../../sip/dialogs/dialogs.js";
import type { SipEndpoint } from "../../sip/stack/endpoint.js";
import type { SipHeaders, SipResponse } from "../../sip/stack/message.js";
import { responseFromRow } from "../../sip/dialogs/server-responses.js";
import type { AddressBlock } from "../../sip/trunk-allow.js";
import type { AckWaits } from "./sip-ack-waits.js";

/** How long a held server transaction waits for its final response before it is let go. */
const holdMs = 10 * 60_000;

export interface TrunkResponses {
  /** The trunk's INVITE has its server transaction in this process (by SIP Call-ID). */
  hold(sipCallId: string, respond: (response: SipResponse) => void): void;
  /**
   * The final response to the trunk's INVITE, built from the leg's row: through the INVITE's
   * server transaction when this process holds it (a non-2xx is then retransmitted until the
   * trunk's ACK), else statelessly to the trunk's source flow (RFC 3261 §8.2.6, §17.2). A 2xx
   * is retransmitted by us until its ACK either way (§13.3.1.4); `onAcked` runs on the ACK.
   */
  final(
    row: Dialog,
    status: number,
    extra?: { headers?: SipHeaders; sdp?: string; onAcked?: () => void },
  ): void;
  /**
   * A provisional response to the trunk's INVITE (a 183 with the phone's early media), built
   * from the leg's row: through the server transaction when this process holds it (which stays
   * held for the final response), else statelessly.
   */
  provisional(row: Dialog, status: number, extra: { headers?: SipHeaders; sdp?: string }): void;
  clear(): void;
}

export function createTrunkResponses(options: {
  endpoint: SipEndpoint;
  ackWaits: AckWaits;
  /** SIP_TRUNK_ALLOW: where the trunk's ACK may come from (besides the INVITE's source). */
  trunkAllow: readonly AddressBlock[];
  logger: Logger;
}): TrunkResponses {
  const { endpoint, ackWaits, logger } = options;
  const held = new Map<
    string,
    { respond: (response: SipResponse) => void; timer: NodeJS.Timeout }
  >();

  const release = (sipCallId: string) => {
    const entry = held.get(sipCallId);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    held.delete(sipCallId);
    return entry.respond;
  };

  /** The response the row makes (SDP as its body), or undefined when the row cannot make one. */
  const fromRow = (
    row: Dialog,
    status: number,
    extra: { headers?: SipHeaders | undefined; sdp?: string | undefined },
  ) => {
    const response = responseFromRow(row, status, {
      ...extra.headers,
      ...(extra.sdp ? { "content-type": "application/sdp" } : {}),
    });
    if (response && extra.sdp) response.content = extra.sdp;
    return response;
  };
  const sendStateless = (row: Dialog, response: SipResponse) => {
    if (!endpoint.transport.send(response, flowOf(row))) {
      logger.debug({ status: response.status }, "sip: the trunk's flow could not be reached");
    }
  };

  return {
    provisional(row, status, extra) {
      const response = fromRow(row, status, extra);
      if (!response) return;
      const local = held.get(row.sip_call_id);
      if (local) local.respond(response);
      else sendStateless(row, response);
    },
    hold(sipCallId, respond) {
      release(sipCallId);
      const timer = setTimeout(() => held.delete(sipCallId), holdMs).unref();
      held.set(sipCallId, { respond, timer });
    },
    final(row, status, extra = {}) {
      const response = fromRow(row, status, extra);
      if (!response) return;
      const stateless = () => sendStateless(row, response);
      const local = release(row.sip_call_id);
      if (local) local(response);
      else stateless();
      if (status >= 200 && status < 300) {
        const invite = row.server_invite!;
        ackWaits.untilAcked(
          {
            callId: invite["call-id"],
            cseq: invite.cseq.seq,
            fromTag: String(invite.from.params.tag ?? ""),
          },
          stateless,
          (address) => fromDialogPeerAddress(row, address, options.trunkAllow),
          extra.onAcked,
        );
      }
    },
    clear() {
      for (const sipCallId of [...held.keys()]) release(sipCallId);
    },
  };
}
