import { DomainError, type Logger } from "@switchboard/kit";
import type { Hangup } from "../../calls/states.js";
import type { DueAction } from "../../scheduler/action-runner.js";
import type { Tx } from "../../scheduler/tx.js";
import { fromDialogPeer } from "../../sip/dialogs/dialog-peer.js";
import { callingDialog, inviteOf, recordRouteOf } from "../../sip/dialogs/dialog-requests.js";
import {
  confirmServerDialog,
  dialogsOf,
  findServerDialog,
  insertDialogStatement,
  insertServerDialog,
  markAcked,
  type Dialog,
} from "../../sip/dialogs/dialogs.js";
import { responseFlow, type SipRequestContext } from "../../sip/stack/endpoint.js";
import { readInboundInvite } from "../../sip/inbound-invite.js";
import {
  newTag,
  responseTo,
  type NameAddress,
  type SipRequest,
  type SipResponse,
} from "../../sip/stack/message.js";
import { lockCallToPhone } from "../../sip/registrar/registrations.js";
import { phoneOrigin, phoneRoute } from "../../sip/registrar/path.js";
import type { SipTransportName } from "../../sip/stack/transport.js";
import { carriesSdp } from "../../sip/stack/sdp.js";
import { responseFromRow, serverInviteOf } from "../../sip/dialogs/server-responses.js";
import { allowedSource, type AddressBlock } from "../../sip/trunk-allow.js";
import type { CarrierEvents } from "../../calls/carrier.js";
import { hangupForFailure, hangupForStatus } from "./sip-causes.js";
import type { SipLegs } from "./sip-legs.js";
import type { MediaRelay } from "./sip-media.js";
import type { TrunkResponses } from "./sip-trunk-responses.js";

/** Where an inbound call over SIP is delivered: the DID's owner, then the call engine. */
export interface InboundDelivery {
  /** The account a DID is assigned to (inventory's FindNumberOwner), if any. */
  ownerOf(e164: string): Promise<string | undefined>;
  /**
   * receiveInboundCall: the call ringing under its route, or `rejected` (no route);
   * `onRinging` runs in the transaction that makes it ring.
   */
  receive(
    delivery: {
      accountId: string;
      from: string;
      to: string;
      assertedIdentity?: string | undefined;
    },
    onRinging: (tx: Tx, call: { id: string }) => Promise<void>,
  ): Promise<{ id: string; status: string }>;
}

export interface SipInbound {
  /** A new INVITE (no To tag). */
  onInvite(request: SipRequest, context: SipRequestContext): Promise<void>;
  /** A CANCEL of the trunk's pending INVITE. */
  onCancel(request: SipRequest, context: SipRequestContext): Promise<void>;
  /** Inside the API's answer: the call must have a trunk leg waiting (else 409). */
  answer(tx: Tx, callId: string): Promise<void>;
  /** The durable action `answer` schedules: the seat's phone is INVITEd with the trunk's offer. */
  invitePhone(tx: Tx, action: DueAction): Promise<void>;
  /** The phone has not answered in `phoneAnswerMs`: the trunk gets 480 (no_answer). */
  phoneTimedOut(tx: Tx, action: DueAction): Promise<void>;
}

export const inboundKinds = {
  answer: "sip.answer_inbound",
  phoneTimeout: "sip.inbound_phone_timeout",
} as const;

/** How long the seat's phone may ring once the account answered (64·T1, as Timer B). */
const phoneAnswerMs = 32_000;

/**
 * Inbound calls over SIP (docs/api.md "Voice over SIP"): an INVITE from an allowed trunk
 * address to a DID rings the call (100, then 180; the trunk's leg is a row we are the UAS of);
 * the account's answer INVITEs the seat's phone with the trunk's offer, and the phone's answer
 * goes to the trunk in our 200 (resent until the trunk's ACK). Any final response to the trunk
 * is built from the row, so any replica sends it.
 */
export function createSipInbound(options: {
  legs: SipLegs;
  trunkResponses: TrunkResponses;
  media: MediaRelay;
  allow: readonly AddressBlock[];
  delivery: InboundDelivery;
  attached(): CarrierEvents;
  react(callId: string, work: (tx: Tx) => Promise<void>): void;
  lockCall(tx: Tx, callId: string): Promise<string | undefined>;
  contact(transport: SipTransportName): NameAddress[];
  owner: string;
  /** What our Via says over a transport. */
  sentBy(transport: SipTransportName): string;
  instance: string;
  domain: string;
  logger: Logger;
}): SipInbound {
  const { legs, trunkResponses, media, delivery, contact, owner, logger } = options;

  /** The call ends with the trunk never answered: its unanswered status even after the API's answer. */
  const fail = async (tx: Tx, callId: string, hangup: Hangup, trunkStatus = 480) => {
    await options.attached().onCarrierEvent(tx, {
      type: "ended",
      callId,
      at: new Date(),
      hangup,
      unanswered: true,
    });
    await legs.closeAll(tx, callId, trunkStatus);
  };

  /**
   * The DID's account, then the call: 404 for a DID no account has (or one released while
   * the call was delivered), 503 when the inventory or the database cannot answer.
   */
  const deliver = async (
    caller: { from: string; to: string; assertedIdentity?: string | undefined },
    onRinging: (tx: Tx, call: { id: string }) => Promise<void>,
  ) => {
    try {
      const accountId = await delivery.ownerOf(caller.to);
      if (!accountId) return 404;
      return await delivery.receive({ accountId, ...caller }, onRinging);
    } catch (error) {
      if (error instanceof DomainError && error.kind === "validation-failed") return 404;
      logger.warn({ err: error }, "sip: an inbound call could not be delivered");
      return 503;
    }
  };

  /**
   * An INVITE of a call we already have (its Call-ID and the trunk's tag) that no server
   * transaction here caught: a retransmission reaching a restarted process or another
   * replica. It gets the 180 again while the call rings (this process now holds it); no call
   * is made twice. True when it was such a repeat.
   */
  const repeated = async (
    request: SipRequest,
    remoteTag: string,
    respond: (response: SipResponse) => void,
  ) => {
    const row = await options
      .attached()
      .transaction((tx) => findServerDialog(tx.client, request.headers["call-id"], remoteTag));
    if (!row) return false;
    if (row.state === "calling") {
      trunkResponses.hold(row.sip_call_id, respond);
      const ringing = responseFromRow(row, 180, { contact: contact(row.flow_transport) });
      if (ringing) respond(ringing);
    }
    return true;
  };

  const onInvite = async (request: SipRequest, { flow, respond }: SipRequestContext) => {
    if (!allowedSource(options.allow, flow.address)) {
      respond(responseTo(request, 403));
      return;
    }
    const invite = readInboundInvite(request);
    if (!invite.ok) {
      respond(responseTo(request, invite.status, {}, invite.reason));
      return;
    }
    respond(responseTo(request, 100));
    if (await repeated(request, invite.remoteTag, respond)) return;
    const via = request.headers.via[0]!;
    const localTag = newTag();
    const target = responseFlow(request, flow);
    /** The trunk's leg, recorded with the call it rings (an answer finds it at once). */
    const trunkLeg = (callId: string) => ({
      call_id: callId,
      leg: "trunk" as const,
      sip_call_id: request.headers["call-id"],
      local_tag: localTag,
      remote_tag: invite.remoteTag,
      local_uri: request.headers.to.uri,
      remote_uri: request.headers.from.uri,
      remote_target: invite.contact,
      route_set: recordRouteOf(request),
      invite_uri: request.uri,
      invite_branch: String(via.params.branch ?? ""),
      invite_sent_by: `${via.host}:${via.port ?? 5060}`,
      invite_cseq: request.headers.cseq.seq,
      local_cseq: 1,
      flow_transport: target.transport,
      flow_address: target.address,
      flow_port: target.port,
      remote_sdp: invite.offer,
      state: "calling" as const,
      owner_address: owner,
      owner_instance: options.instance,
      server_invite: serverInviteOf(request, localTag),
    });
    const caller = { from: invite.from, to: invite.to, assertedIdentity: invite.assertedIdentity };
    const call = await deliver(caller, async (tx, ringing) => {
      await insertServerDialog(tx.client, trunkLeg(ringing.id));
    });
    if (typeof call === "number") {
      respond(responseTo(request, call));
      return;
    }
    if (call.status !== "ringing") {
      respond(responseTo(request, 404)); // no route: the call is `rejected` / `no_route`
      return;
    }
    trunkResponses.hold(request.headers["call-id"], respond);
    const row = { ...trunkLeg(call.id), acked: false } as Dialog;
    const ringing = responseFromRow(row, 180, { contact: contact(row.flow_transport) });
    if (ringing) respond(ringing);
  };

  /**
   * RFC 3261 §9.2: the CANCEL gets 200 first, then the INVITE (still pending) gets 487. Only
   * the trunk cancels its INVITE: a CANCEL from elsewhere gets 403 and changes nothing.
   */
  const onCancel = async (request: SipRequest, { flow, respond }: SipRequestContext) => {
    const tag = request.headers.from.params.tag;
    const row = tag
      ? await options
          .attached()
          .transaction((tx) => findServerDialog(tx.client, request.headers["call-id"], String(tag)))
      : undefined;
    if (row && !(await fromDialogPeer(row, flow.address, options.allow))) {
      respond(responseTo(request, 403));
      return;
    }
    respond(responseTo(request, row ? 200 : 481));
    if (!row || row.state !== "calling") return;
    await options.attached().transaction(async (tx) => {
      await options.lockCall(tx, row.call_id);
      const [trunk] = (await dialogsOf(tx.client, row.call_id)).filter((d) => d.leg === "trunk");
      if (trunk?.state !== "calling") return;
      const hangup: Hangup = { cause: "originator_cancel", source: "caller", sipCode: 487 };
      await fail(tx, row.call_id, hangup, 487);
    });
  };

  const answer = async (tx: Tx, callId: string) => {
    const [trunk] = (await dialogsOf(tx.client, callId)).filter((d) => d.leg === "trunk");
    if (!trunk?.server_invite || trunk.state !== "calling") {
      // A call left ringing by a sandbox run (no trunk leg): nothing to answer it on.
      throw new DomainError("invalid-state", "the call has no SIP trunk leg waiting for an answer");
    }
    await tx.schedule({ callId, kind: inboundKinds.answer });
  };

  const invitePhone = async (tx: Tx, action: DueAction) => {
    const callId = action.callId;
    const call = await lockCallToPhone(tx.client, callId);
    if (call?.status !== "in_progress" || call.phoneLeg) return;
    const [trunk] = (await dialogsOf(tx.client, callId)).filter((d) => d.leg === "trunk");
    if (!trunk || trunk.state !== "calling" || !trunk.remote_sdp) return;
    const { seatId, phone } = call;
    if (!phone) {
      await fail(tx, callId, { cause: "seat_unavailable", source: "platform", sipCode: 480 });
      return;
    }
    const dialog = callingDialog({
      callId,
      leg: "phone",
      localUri: `sip:${call.fromNumber}@${options.domain}`,
      remoteUri: `sip:${seatId}@${options.domain}`,
      inviteUri: phone.contact_uri,
      // Straight to its registration's source, or through the edge its Path names (RFC 3327).
      ...phoneRoute(phone),
      offer: trunk.remote_sdp,
      owner,
      sentBy: options.sentBy(phone.transport),
      instance: options.instance,
    });
    const insert = insertDialogStatement(dialog);
    tx.defer(insert.text, insert.values);
    await tx.schedule({ callId, kind: inboundKinds.phoneTimeout, delayMs: phoneAnswerMs });
    // The phone itself (behind the edge: as the edge saw it), not the hop to it.
    const origin = phoneOrigin(phone);
    tx.afterCommit(() => {
      void media
        .offer({
          callId,
          offerer: "trunk",
          sdp: trunk.remote_sdp!,
          flow: trunk.flow_address,
          // A phone on TLS (to us or to the edge) gets SRTP (SDES) from the relay; others plain RTP.
          secure: origin.transport === "tls",
        })
        .then((offer) =>
          legs.invite(
            dialog,
            inviteOf(dialog as Dialog, { contact: contact(phone.transport) }, offer),
            {
              onResponse: (response) => onPhoneResponse(callId, response, origin.address),
              onFailure: (reason) =>
                options.react(callId, (next) =>
                  fail(next, callId, hangupForFailure(reason, "callee")),
                ),
            },
          ),
        )
        .catch((error: unknown) => {
          logger.warn({ err: error, callId }, "sip: the RTP relay refused the trunk's offer");
          options.react(callId, (next) =>
            fail(next, callId, { cause: "network_error", source: "platform", sipCode: 503 }),
          );
        });
    });
  };

  const onPhoneResponse = (callId: string, response: SipResponse, phoneAddress: string) => {
    if (response.status > 100 && response.status < 200 && carriesSdp(response)) {
      media
        .answer({
          callId,
          offerer: "trunk",
          answerer: "phone",
          sdp: response.content!,
          flow: phoneAddress,
        })
        .then(
          (sdp) => earlyMedia(callId, sdp),
          (error: unknown) =>
            logger.warn(
              { err: error, callId },
              "sip: the RTP relay refused the phone's early media",
            ),
        );
      return;
    }
    if (response.status < 200) return;
    if (response.status >= 300) {
      options.react(callId, (tx) => fail(tx, callId, hangupForStatus(response.status, "callee")));
      return;
    }
    if (legs.ackAgain(callId, "phone")) return;
    const setup = legs.setupOf(callId);
    if (setup.answered.has("phone")) return;
    setup.answered.add("phone");
    const answerSdp = response.content || undefined;
    const relayed = answerSdp
      ? media.answer({
          callId,
          offerer: "trunk",
          answerer: "phone",
          sdp: answerSdp,
          flow: phoneAddress,
        })
      : Promise.resolve(undefined);
    relayed.then(
      (sdp) =>
        connect(
          callId,
          response,
          sdp ? { sdp } : { hangup: { cause: "network_error", source: "callee", sipCode: 200 } },
        ),
      (error: unknown) => {
        logger.warn({ err: error, callId }, "sip: the RTP relay refused the phone's answer");
        connect(callId, response, {
          hangup: { cause: "network_error", source: "platform", sipCode: 503 },
        });
      },
    );
  };

  /**
   * The phone's early media (a 18x with SDP, as the relay rewrote it): the trunk, still waiting
   * for our final response, gets it in a 183 (RFC 3261 §13.3.1.1), and the call records
   * `early_media`.
   */
  const earlyMedia = (callId: string, sdp: string) => {
    options.react(callId, async (tx) => {
      const status = await options.lockCall(tx, callId);
      const [trunk] = (await dialogsOf(tx.client, callId)).filter((d) => d.leg === "trunk");
      if (status !== "in_progress" || trunk?.state !== "calling") return;
      await options.attached().onCarrierEvent(tx, { type: "early_media", callId });
      tx.afterCommit(() =>
        trunkResponses.provisional(trunk, 183, {
          headers: { contact: contact(trunk.flow_transport) },
          sdp,
        }),
      );
    });
  };

  /**
   * The phone answered: its 2xx is ACKed, then the trunk gets our 200 with the (relayed)
   * answer, or, when there is none to give, the call fails and both legs are closed.
   */
  const connect = (
    callId: string,
    response: SipResponse,
    outcome: { sdp: string } | { hangup: Hangup },
  ) => {
    options.react(callId, async (tx) => {
      const { callStatus, answered } = await legs.confirmAnswer(tx, callId, "phone", response);
      if (!answered) return;
      if (callStatus !== "in_progress") {
        await legs.closeAll(tx, callId);
        return;
      }
      if ("hangup" in outcome) {
        await fail(tx, callId, outcome.hangup);
        return;
      }
      const trunk = await confirmServerDialog(tx.client, callId);
      if (!trunk) {
        await legs.closeAll(tx, callId);
        return;
      }
      tx.afterCommit(() => {
        legs.release(callId);
        trunkResponses.final(trunk, 200, {
          headers: { contact: contact(trunk.flow_transport) },
          sdp: outcome.sdp,
          onAcked: () => options.react(callId, (next) => markAcked(next.client, callId, "trunk")),
        });
      });
    });
  };

  const phoneTimedOut = async (tx: Tx, action: DueAction) => {
    const status = await options.lockCall(tx, action.callId);
    const [trunk] = (await dialogsOf(tx.client, action.callId)).filter((d) => d.leg === "trunk");
    if (status !== "in_progress" || trunk?.state !== "calling") return;
    await fail(tx, action.callId, { cause: "no_answer", source: "callee", sipCode: 408 });
  };

  return { onInvite, onCancel, answer, invitePhone, phoneTimedOut };
}
