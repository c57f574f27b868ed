import type { Tx } from "../../scheduler/tx.js";
import { ackFor2xx, inDialogRequest } from "../../sip/dialogs/dialog-requests.js";
import { flowOf, nextCseq, refreshTarget, type Dialog } from "../../sip/dialogs/dialogs.js";
import type { SipEndpoint } from "../../sip/stack/endpoint.js";
import type { NameAddress, SipResponse } from "../../sip/stack/message.js";
import type { SipTransportName } from "../../sip/stack/transport.js";

/** What the other leg answered to a relayed offer. */
export interface RelayOutcome {
  status: number;
  reason: string;
  /** The answer SDP of a 2xx. */
  sdp?: string | undefined;
}

/**
 * Sends an SDP offer (a re-INVITE's or an UPDATE's) to the other leg of the call inside its
 * dialog and resolves with its final answer; a 2xx to a re-INVITE is ACKed at once (again for
 * each retransmission) and its Contact refreshes the leg's target. No final answer: 408 (Timer
 * B/F) or 503 (not sent). A leg no longer confirmed: 481.
 */
export async function relayOffer(options: {
  endpoint: SipEndpoint;
  /** Runs one statement (the engine's oneStatement): each write here is one. */
  oneStatement<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  other: Dialog;
  method: "INVITE" | "UPDATE";
  sdp: string;
  contact(transport: SipTransportName): NameAddress[];
  sentBy: string;
}): Promise<RelayOutcome> {
  const { endpoint, other, method } = options;
  const cseq = await options.oneStatement((tx) => nextCseq(tx.client, other.call_id, other.leg));
  if (cseq === undefined) return { status: 481, reason: "Call/Transaction Does Not Exist" };
  const request = inDialogRequest(other, method, cseq, {
    contact: options.contact(other.flow_transport),
    "content-type": "application/sdp",
  });
  request.content = options.sdp;
  const ack = method === "INVITE" ? ackFor2xx(other, options.sentBy, undefined, cseq) : undefined;
  return new Promise<RelayOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: RelayOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    endpoint.client.send(request, flowOf(other), {
      onResponse: (response: SipResponse) => {
        if (response.status < 200) return;
        if (response.status < 300) {
          if (ack) endpoint.transport.send(ack, flowOf(other));
          const contact = response.headers.contact;
          const target = Array.isArray(contact) ? contact[0]?.uri : undefined;
          if (!settled && target && target !== other.remote_target) {
            void options
              .oneStatement((tx) => refreshTarget(tx.client, other.call_id, other.leg, target))
              .catch(() => undefined);
          }
        }
        settle({
          status: response.status,
          reason: response.reason ?? "",
          sdp: response.status < 300 ? response.content || undefined : undefined,
        });
      },
      onFailure: (reason) =>
        settle(
          reason === "timeout"
            ? { status: 408, reason: "Request Timeout" }
            : { status: 503, reason: "Service Unavailable" },
        ),
    });
  });
}
