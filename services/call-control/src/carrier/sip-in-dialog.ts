import type { Hangup } from "../calls/states.js";
import type { Tx } from "../scheduler/tx.js";
import {
  acceptRemoteCseq,
  closedByPeer,
  dialogsOf,
  findDialog,
  refreshTarget,
  type DialogLeg,
} from "../sip/dialogs.js";
import type { SipEndpoint, SipRequestContext } from "../sip/endpoint.js";
import { responseTo, textHeader, type NameAddress, type SipRequest } from "../sip/message.js";
import type { CarrierEvents } from "./carrier.js";
import { relayOffer } from "./sip-relay.js";

/**
 * Requests the phone or the trunk sends inside a call's dialogs (docs/api.md "Voice over SIP"):
 * a BYE ends the call (the phone is the caller's side, the trunk the callee's) and closes the
 * other leg; a re-INVITE or UPDATE with an offer is relayed to the other leg; a request of no
 * dialog we know gets 481. A new INVITE (no To tag) is an inbound call, which this carrier does
 * not take yet: 403.
 */
export function handleInDialogRequests(options: {
  endpoint: SipEndpoint;
  events: CarrierEvents;
  lockCall(tx: Tx, callId: string): Promise<string | undefined>;
  closeLeg(tx: Tx, callId: string, leg: DialogLeg): Promise<void>;
  /** Our Contact, and the address our Via says. */
  contact: NameAddress[];
  sentBy: string;
  /** T1 (RFC 3261's 500 ms). */
  t1Ms?: number;
}): void {
  const { endpoint, events, lockCall, closeLeg, contact, sentBy } = options;
  const t1Ms = options.t1Ms ?? 500;
  /** Calls with an offer being relayed now. */
  const relaying = new Set<string>();
  /** Our 2xx to re-INVITEs waiting for their ACK, by Call-ID, CSeq and From tag. */
  const awaitingAck = new Map<string, () => void>();

  const dialogOf = (tx: Tx, request: SipRequest) => {
    const local = request.headers.to.params.tag;
    const remote = request.headers.from.params.tag;
    if (!local || !remote) return Promise.resolve(undefined);
    return findDialog(tx.client, request.headers["call-id"], local, remote);
  };

  endpoint.handle("BYE", async (request, { respond }: SipRequestContext) => {
    const status = await events.transaction(async (tx) => {
      const dialog = await dialogOf(tx, request);
      if (!dialog) return 481;
      const callStatus = await lockCall(tx, dialog.call_id);
      const cseq = request.headers.cseq.seq;
      if (!(await acceptRemoteCseq(tx.client, dialog.call_id, dialog.leg, cseq))) return 500;
      const source = dialog.leg === "phone" ? "caller" : "callee";
      const hangup: Hangup =
        callStatus === "in_progress"
          ? { cause: "normal_clearing", source, sipCode: 200 }
          : { cause: "originator_cancel", source, sipCode: 487 };
      if (await closedByPeer(tx.client, dialog.call_id, dialog.leg)) {
        await events.onCarrierEvent(tx, {
          type: "ended",
          callId: dialog.call_id,
          at: new Date(),
          hangup,
        });
      }
      await closeLeg(tx, dialog.call_id, dialog.leg === "phone" ? "trunk" : "phone");
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
    (method: "INVITE" | "UPDATE") =>
    async (request: SipRequest, { respond }: SipRequestContext) => {
      if (!request.headers.to.params.tag) {
        // A new INVITE is an inbound call (not taken yet); an UPDATE outside a dialog is none.
        respond(responseTo(request, method === "INVITE" ? 403 : 481));
        return;
      }
      const found = await events.transaction(async (tx) => {
        const dialog = await dialogOf(tx, request);
        if (!dialog || dialog.state !== "confirmed") return undefined;
        const status = await lockCall(tx, dialog.call_id);
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
      const { dialog, status, other, outOfOrder } = found;
      if (outOfOrder) {
        respond(responseTo(request, 500, {}, "CSeq Out of Order"));
        return;
      }
      const offer = isSdp(request) ? request.content : undefined;
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
        const outcome = await relayOffer({
          endpoint,
          transaction: (work) => events.transaction(work),
          other,
          method,
          sdp: offer,
          contact,
          sentBy,
        });
        if (outcome.status >= 300 || !outcome.sdp) {
          const refused = outcome.status >= 300 ? outcome : { status: 488, reason: "" };
          respond(responseTo(request, refused.status, {}, refused.reason || undefined));
          return;
        }
        const answer = responseTo(request, 200, { contact, "content-type": "application/sdp" });
        answer.content = outcome.sdp;
        respond(answer);
        if (method === "INVITE") untilAcked(request, () => respond(answer));
      } finally {
        relaying.delete(dialog.call_id);
      }
    };

  /** Our 2xx to a re-INVITE is sent again (T1 doubling to T2) until its ACK, for 64·T1. */
  const untilAcked = (request: SipRequest, again: () => void) => {
    const key = ackKey(request);
    let interval = t1Ms;
    let timer: NodeJS.Timeout;
    const stop = () => {
      clearTimeout(timer);
      clearTimeout(limit);
      awaitingAck.delete(key);
    };
    const tick = () => {
      again();
      interval = Math.min(interval * 2, 4_000);
      timer = setTimeout(tick, interval).unref();
    };
    timer = setTimeout(tick, interval).unref();
    const limit = setTimeout(stop, 64 * t1Ms).unref();
    awaitingAck.set(key, stop);
  };
  const ackKey = (request: SipRequest) =>
    `${request.headers["call-id"]}|${request.headers.cseq.seq}|${request.headers.from.params.tag ?? ""}`;

  endpoint.handle("INVITE", renegotiate("INVITE"));
  endpoint.handle("UPDATE", renegotiate("UPDATE"));
  endpoint.handle("ACK", async (request) => {
    awaitingAck.get(ackKey(request))?.();
  });
}

function contactOf(request: SipRequest): string | undefined {
  const contact = request.headers.contact;
  return Array.isArray(contact) ? contact[0]?.uri : undefined;
}

function isSdp(request: SipRequest): boolean {
  return (
    /^application\/sdp\b/i.test(textHeader(request, "content-type") ?? "") && !!request.content
  );
}
