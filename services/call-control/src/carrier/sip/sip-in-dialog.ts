import type { Hangup } from "../../calls/states.js";
import type { Tx } from "../../scheduler/tx.js";
import {
  acceptRemoteCseq,
  closedByPeer,
  closeOnPeerBye,
  dialogsOf,
  findDialog,
  refreshTarget,
  type Dialog,
  type DialogLeg,
  type DialogState,
} from "../../sip/dialogs/dialogs.js";
import { fromDialogPeer, peerSource } from "../../sip/dialogs/dialog-peer.js";
import { phoneDialogOnTls } from "../../sip/registrar/path.js";
import type { SipEndpoint, SipRequestContext } from "../../sip/stack/endpoint.js";
import { responseTo, type NameAddress, type SipRequest } from "../../sip/stack/message.js";
import type { SipTransportName } from "../../sip/stack/transport.js";
import { carriesSdp } from "../../sip/stack/sdp.js";
import type { AddressBlock } from "../../sip/trunk-allow.js";
import type { CarrierEvents } from "../../calls/carrier.js";
import type { AckWaits } from "./sip-ack-waits.js";
import { MediaRefused, type MediaRelay } from "./sip-media.js";
import { relayOffer } from "./sip-relay.js";

/**
 * Requests the phone or the trunk sends inside a call's dialogs (docs/api.md "Voice over SIP"):
 * a BYE ends the call (the phone is the caller's side, the trunk the callee's) and closes the
 * other leg; a re-INVITE or UPDATE with an offer is relayed to the other leg; a request of no
 * dialog we know gets 481, one not from the leg's peer (`fromDialogPeer`) 403 and changes
 * nothing (an ACK so is ignored). A new INVITE (no To tag) goes to `onNewInvite` (an inbound call).
 */
export function handleInDialogRequests(options: {
  endpoint: SipEndpoint;
  events: CarrierEvents;
  lockCall(tx: Tx, callId: string): Promise<string | undefined>;
  closeLeg(tx: Tx, callId: string, leg: DialogLeg): Promise<void>;
  /** What closeLeg does after its statement, for a leg the caller's statement terminated. */
  closedLeg(tx: Tx, row: Dialog & { previous_state: DialogState }): void;
  /** Our Contact, and the address our Via says. */
  contact(transport: SipTransportName): NameAddress[];
  sentBy: string;
  /** Our 2xx to INVITEs waiting for their ACK. */
  ackWaits: AckWaits;
  /** The relayed offer and its answer go through the RTP relay. */
  media: MediaRelay;
  /** SIP_TRUNK_ALLOW: where the trunk leg's requests may come from. */
  trunkAllow: readonly AddressBlock[];
  /** A new INVITE (no To tag): an inbound call. */
  onNewInvite(request: SipRequest, context: SipRequestContext): Promise<void>;
}): void {
  const { endpoint, events, lockCall, closeLeg, closedLeg, contact, sentBy, ackWaits } = options;
  const { media, trunkAllow } = options;
  /** Calls with an offer being relayed now. */
  const relaying = new Set<string>();

  const dialogOf = (tx: Tx, request: SipRequest) => {
    const local = request.headers.to.params.tag;
    const remote = request.headers.from.params.tag;
    if (!local || !remote) return Promise.resolve(undefined);
    return findDialog(tx.client, request.headers["call-id"], local, remote);
  };

  /**
   * The far end's BYE. The dialog is found, the call locked and the leg closed in one statement
   * when the request came from the leg's address (`closeOnPeerBye`); for a trunk named by DNS,
   * whose addresses that statement cannot know, the name is resolved and the leg closed after.
   */
  const closeOnBye = async (tx: Tx, request: SipRequest, source: string) => {
    const local = request.headers.to.params.tag;
    const remote = request.headers.from.params.tag;
    if (!local || !remote) return undefined;
    const cseq = request.headers.cseq.seq;
    const sipCallId = request.headers["call-id"];
    const found = await closeOnPeerBye(
      tx.client,
      { sipCallId, localTag: local, remoteTag: remote, cseq },
      peerSource(source, trunkAllow),
    );
    if (!found || found.peer) return found;
    const { dialog } = found;
    if (!(await fromDialogPeer(dialog, source, trunkAllow))) return found;
    const closed = await closedByPeer(tx.client, dialog.call_id, dialog.leg, cseq);
    return { dialog, peer: true, closed };
  };

  endpoint.handle("BYE", async (request, { flow, respond }: SipRequestContext) => {
    const status = await events.transaction(async (tx) => {
      const found = await closeOnBye(tx, request, flow.address);
      if (!found) return 481;
      if (!found.peer) return 403;
      const { dialog, closed } = found;
      if (!closed) return 500;
      const callStatus = dialog.call_status;
      // The trunk is the caller's side of an inbound call (the leg we are the UAS of).
      const source = (dialog.leg === "trunk") === dialog.inbound ? "caller" : "callee";
      const hangup: Hangup =
        callStatus === "in_progress"
          ? { cause: "normal_clearing", source, sipCode: 200 }
          : { cause: "originator_cancel", source, sipCode: 487 };
      if (closed.wasOpen) {
        // Its statement travels with the COMMIT: nothing here reads what it wrote.
        events.foldCarrierEvent(tx, {
          type: "ended",
          callId: dialog.call_id,
          at: new Date(),
          hangup,
        });
      }
      // The other leg, closed in the same statement: its BYE or CANCEL follows the commit.
      if (closed.other) closedLeg(tx, closed.other);
      return 200;
    });
    respond(responseTo(request, status));
  });

  /**
   * A re-INVITE or UPDATE with an SDP offer, from one leg of an answered call: relayed to the
   * other leg (RFC 3725's B2BUA keeps both sessions in step), whose final answer goes back.
   * Without an offer, or outside an answered call: 488. A second one while one is relayed: 491.
   */
  const renegotiate =
    (method: "INVITE" | "UPDATE") => async (request: SipRequest, context: SipRequestContext) => {
      const { respond } = context;
      if (!request.headers.to.params.tag) {
        // A new INVITE is an inbound call; an UPDATE outside a dialog is none.
        if (method === "INVITE") await options.onNewInvite(request, context);
        else respond(responseTo(request, 481));
        return;
      }
      const found = await events.transaction(async (tx) => {
        const dialog = await dialogOf(tx, request);
        if (!dialog || dialog.state !== "confirmed") return undefined;
        if (!(await fromDialogPeer(dialog, context.flow.address, trunkAllow))) return "forbidden";
        const status = dialog.call_status;
        const cseq = request.headers.cseq.seq;
        if (!(await acceptRemoteCseq(tx.client, dialog.call_id, dialog.leg, cseq))) {
          return { dialog, status, other: undefined, outOfOrder: true };
        }
        const other = (await dialogsOf(tx.client, dialog.call_id)).find(
          (d) => d.leg !== dialog.leg,
        );
        const target = contactOf(request);
        if (target && target !== dialog.remote_target) {
          await refreshTarget(tx.client, dialog.call_id, dialog.leg, target);
        }
        return { dialog, status, other, outOfOrder: false };
      });
      if (!found) {
        respond(responseTo(request, 481));
        return;
      }
      if (found === "forbidden") {
        respond(responseTo(request, 403));
        return;
      }
      const { dialog, status, other, outOfOrder } = found;
      if (outOfOrder) {
        respond(responseTo(request, 500, {}, "CSeq Out of Order"));
        return;
      }
      const offer = carriesSdp(request) ? request.content : undefined;
      if (status !== "in_progress" || other?.state !== "confirmed" || !offer) {
        respond(responseTo(request, 488));
        return;
      }
      if (relaying.has(dialog.call_id)) {
        respond(responseTo(request, 491, {}, "Request Pending"));
        return;
      }
      relaying.add(dialog.call_id);
      if (method === "INVITE") respond(responseTo(request, 100));
      try {
        const callId = dialog.call_id;
        const legs = { offerer: dialog.leg, answerer: other.leg };
        // A phone on TLS (to us, or to the edge its dialog goes through) is offered SRTP.
        const secure = other.leg === "phone" && phoneDialogOnTls(other);
        const relayed = await media
          .offer({ callId, offerer: legs.offerer, sdp: offer, flow: dialog.flow_address, secure })
          .catch((error: unknown) => (error instanceof MediaRefused ? error : undefined));
        if (relayed instanceof MediaRefused) {
          // SRTP from the phone without the relay: this offer only is refused, the call goes on.
          respond(responseTo(request, relayed.status));
          return;
        }
        if (relayed === undefined) {
          respond(responseTo(request, 500));
          await failOnRelay(callId);
          return;
        }
        const outcome = await relayOffer({
          endpoint,
          oneStatement: (work) => events.oneStatement(work),
          other,
          method,
          sdp: relayed,
          contact,
          sentBy,
        });
        if (outcome.status >= 300 || !outcome.sdp) {
          const refused = outcome.status >= 300 ? outcome : { status: 488, reason: "" };
          respond(responseTo(request, refused.status, {}, refused.reason || undefined));
          return;
        }
        const answerSdp = await media
          .answer({ callId, ...legs, sdp: outcome.sdp, flow: other.flow_address })
          .catch(() => undefined);
        if (answerSdp === undefined) {
          respond(responseTo(request, 500));
          await failOnRelay(callId);
          return;
        }
        const answer = responseTo(request, 200, {
          contact: contact(context.flow.transport),
          "content-type": "application/sdp",
        });
        answer.content = answerSdp;
        respond(answer);
        if (method === "INVITE") {
          const key = {
            callId: request.headers["call-id"],
            cseq: request.headers.cseq.seq,
            fromTag: String(request.headers.from.params.tag ?? ""),
          };
          const peer = context.flow.address;
          ackWaits.untilAcked(
            key,
            () => respond(answer),
            (address) => address === peer,
          );
        }
      } finally {
        relaying.delete(dialog.call_id);
      }
    };

  /** The RTP relay refused a renegotiation: the call fails (network_error), both legs close. */
  const failOnRelay = (callId: string) =>
    events.transaction(async (tx) => {
      await lockCall(tx, callId);
      await events.onCarrierEvent(tx, {
        type: "ended",
        callId,
        at: new Date(),
        hangup: { cause: "network_error", source: "platform", sipCode: 503 },
      });
      await closeLeg(tx, callId, "phone");
      await closeLeg(tx, callId, "trunk");
    });

  endpoint.handle("INVITE", renegotiate("INVITE"));
  endpoint.handle("UPDATE", renegotiate("UPDATE"));
  endpoint.handle("ACK", async (request, { flow }) => {
    ackWaits.acked(request, flow.address);
  });
}

function contactOf(request: SipRequest): string | undefined {
  const contact = request.headers.contact;
  return Array.isArray(contact) ? contact[0]?.uri : undefined;
}
