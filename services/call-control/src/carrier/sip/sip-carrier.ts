import { randomBytes } from "node:crypto";
import { isIPv6 } from "node:net";
import type { Logger } from "@switchboard/kit";
import type { Hangup } from "../../calls/states.js";
import type { DueAction } from "../../scheduler/action-runner.js";
import { timerTraceCarrier, type Tx } from "../../scheduler/tx.js";
import { newClientBranch } from "../../sip/stack/client-transactions.js";
import { answerChallenge } from "../../sip/stack/digest.js";
import { callingDialog, ackFor2xx, answerOf, inviteOf } from "../../sip/dialogs/dialog-requests.js";
import {
  confirmDialog,
  dialogsOf,
  insertDialogStatement,
  reinvited,
  strandedCalls,
  terminateDialog,
  type Dialog,
  type DialogLeg,
  type NewDialog,
} from "../../sip/dialogs/dialogs.js";
import type { NameAddress, SipResponse } from "../../sip/stack/message.js";
import type { SipFlow, SipTransportName } from "../../sip/stack/transport.js";
import { carriesSdp, heldAnswer } from "../../sip/stack/sdp.js";
import { lockCallToPhone } from "../../sip/registrar/registrations.js";
import { phoneOrigin, phoneRoute } from "../../sip/registrar/path.js";
import type { RunningSip } from "../../sip/sip-service.js";
import type { SipTrunk } from "../../sip/sip-settings.js";
import type {
  CarrierAdapter,
  CarrierEvents,
  CarrierTimers,
  DialRequest,
  FoldedDial,
} from "../../calls/carrier.js";
import type { AddressBlock } from "../../sip/trunk-allow.js";
import { createAckWaits } from "./sip-ack-waits.js";
import { handleInDialogRequests } from "./sip-in-dialog.js";
import { createSipInbound, inboundKinds, type InboundDelivery } from "./sip-inbound.js";
import { createSipLegs } from "./sip-legs.js";
import { createPhoneMedia } from "./sip-phone-media.js";
import { hangupForFailure, hangupForStatus } from "./sip-causes.js";
import { MediaRefused, type MediaRelay } from "./sip-media.js";
import { createTrunkResponses } from "./sip-trunk-responses.js";
import { contactUri } from "./sip-contact.js";
import { createTrunkFailover } from "./trunk-failover.js";
import { createTrunkTargets } from "./trunk-targets.js";

/** The final response a closeLegs action gives a ringing inbound call's INVITE (480 unless named). */
const finalStatusOf = (payload: Record<string, unknown>): number => {
  const status = Number(payload.status);
  return Number.isInteger(status) && status >= 400 && status <= 699 ? status : 480;
};

const kinds = { invitePhone: "sip.invite_phone", closeLegs: "sip.close_legs" } as const;
const liveStatuses = ["queued", "initiated", "ringing", "in_progress"];
/** Digest challenges answered per call before the trunk's refusal counts as final. */
const maxChallenges = 2;

/** What the trunk's INVITE needs from the dial (kept in the dial's durable action). */
interface DialPayload {
  seat_id: string | null;
  to: string;
  from: string;
  identity: string;
  identity_info: string;
}

/**
 * The `sip` voice carrier (docs/api.md "Voice over SIP"): inbound calls from the trunk
 * (`sip-inbound.ts`), and outbound calls by third-party call control (RFC 3725 flow IV). The
 * seat's phone is INVITEd without SDP; its 200 carries the offer and is ACKed at once with a
 * held answer, and the offer goes to the trunk in an INVITE with the PASSporT in `Identity`,
 * so the trunk may ring the call's whole timeout; the trunk's early media and its answer reach
 * the phone in re-INVITEs (`sip-phone-media.ts`). Each leg's dialog is a row of
 * call_control.sip_dialogs written before its first packet, and every packet goes after the
 * transaction that records it committed, so another replica (or this one after a restart) can
 * end it with BYE or CANCEL.
 */
export function createSipCarrier(options: {
  sip: RunningSip;
  trunk: SipTrunk;
  /** The sources whose INVITEs are inbound calls (SIP_TRUNK_ALLOW). */
  trunkAllow: readonly AddressBlock[];
  delivery: InboundDelivery;
  /** Where the SDP passed between the legs goes (SIP_RTP_RELAY). */
  media: MediaRelay;
  domain: string;
  logger: Logger;
}): CarrierAdapter {
  const { sip, trunk, domain, media, logger } = options;
  const endpoint = sip.endpoint;
  const owner = sip.publicAddress;
  const ownerHost = owner.replace(/:\d+$/, "");
  const instance = randomBytes(8).toString("hex");
  /** Our Contact on a leg over `transport` (TLS: the TLS listener's port). */
  const contact = (transport: SipTransportName): NameAddress[] => [
    { uri: contactUri(endpoint.sentBy(transport), transport), params: {} },
  ];
  const ackWaits = createAckWaits();
  const trunkResponses = createTrunkResponses({
    endpoint,
    ackWaits,
    trunkAllow: options.trunkAllow,
    logger,
  });
  const legs = createSipLegs({
    endpoint,
    owner,
    instance,
    contact,
    media,
    refuseServerInvite: (row, status) => trunkResponses.final(row, status),
    logger,
  });
  const { setupOf } = legs;
  const phoneMedia = createPhoneMedia({
    endpoint,
    oneStatement: (work) => attached().oneStatement(work),
    contact,
    sentBy: owner,
    stateOf: (callId) => setupOf(callId).phoneMedia,
  });
  let events: CarrierEvents | undefined;
  const trunkTargets = createTrunkTargets({
    trunk,
    endpoint,
    logger,
    ipv6: isIPv6(endpoint.transport.host),
  });
  sip.dialTo((flow) => trunkTargets.reaches(flow));
  const trunkFailover = createTrunkFailover({
    targets: trunkTargets,
    endpoint,
    contact,
    failoverTimeoutMs: trunk.failoverTimeoutMs,
    transaction: (work) => attached().transaction(work),
    lockLiveCall: async (tx, callId) => liveStatuses.includes((await lockCall(tx, callId)) ?? ""),
    pendingInvite: (callId) => setupOf(callId).invites.trunk,
    logger,
  });

  const attached = (): CarrierEvents => {
    if (!events) throw new Error("the sip carrier is not attached");
    return events;
  };
  /** Work on the network's behalf, in its own transaction; a failure is logged, not thrown. */
  const react = (callId: string, work: (tx: Tx) => Promise<void>) => {
    if (!events) {
      logger.debug({ callId }, "sip: the carrier stopped; a network event is dropped");
      return;
    }
    events
      .transaction(work)
      .catch((error: unknown) => logger.error({ err: error, callId }, "sip: a call step failed"));
  };
  /** The call's status, its row locked (the order every call transaction takes). */
  const lockCall = async (tx: Tx, callId: string) => {
    const { rows } = await tx.client.query<{ status: string }>(
      `SELECT status FROM call_control.calls WHERE id = $1 FOR UPDATE`,
      [callId],
    );
    return rows[0]?.status;
  };
  const ended = (tx: Tx, callId: string, hangup: Hangup) =>
    attached().onCarrierEvent(tx, { type: "ended", callId, at: new Date(), hangup });
  const inbound = createSipInbound({
    legs,
    trunkResponses,
    media,
    allow: options.trunkAllow,
    delivery: options.delivery,
    attached,
    react,
    lockCall,
    contact,
    owner,
    sentBy: (transport) => endpoint.sentBy(transport),
    instance,
    domain,
    logger,
  });

  // ---- the phone leg ----

  const invitePhone = async (tx: Tx, action: DueAction) => {
    const callId = action.callId;
    const dial = action.payload as unknown as DialPayload;
    const call = await lockCallToPhone(tx.client, callId, dial.seat_id ?? null);
    if (call?.status !== "initiated" && call?.status !== "ringing") return;
    if (call.phoneLeg) return; // a repeat of the dial
    const phone = call.phone;
    if (!phone) {
      await ended(tx, callId, { cause: "seat_unavailable", source: "platform", sipCode: null });
      return;
    }
    const dialog = callingDialog({
      callId,
      leg: "phone",
      localUri: `sip:${dial.to}@${domain}`,
      remoteUri: `sip:${dial.seat_id}@${domain}`,
      inviteUri: phone.contact_uri,
      // Straight to its registration's source, or through the edge its Path names (RFC 3327).
      ...phoneRoute(phone),
      offer: null,
      owner,
      sentBy: endpoint.sentBy(phone.transport),
      instance,
    });
    const insert = insertDialogStatement(dialog);
    tx.defer(insert.text, insert.values);
    tx.afterCommit(() =>
      legs.invite(dialog, inviteOf(dialog as Dialog, { contact: contact(phone.transport) }), {
        // Its media comes from the phone itself (behind the edge: as the edge saw it).
        onResponse: (response) =>
          onPhoneResponse(callId, dial, response, phoneOrigin(phone).address),
        onFailure: (reason) => onLegFailed(callId, "phone", hangupForFailure(reason, "caller")),
      }),
    );
  };

  const onPhoneResponse = (
    callId: string,
    dial: DialPayload,
    response: SipResponse,
    phoneAddress: string,
  ) => {
    if (response.status < 200) return;
    const setup = setupOf(callId);
    if (response.status >= 300) {
      onLegFailed(callId, "phone", hangupForStatus(response.status, "caller"));
      return;
    }
    if (legs.ackAgain(callId, "phone")) return;
    if (setup.answered.has("phone")) return; // a retransmission while the trunk is asked
    setup.answered.add("phone");
    const phoneOffer = response.content || undefined;
    const relayed = phoneOffer
      ? media.offer({
          callId,
          offerer: "phone",
          sdp: phoneOffer,
          flow: phoneAddress,
          secure: false,
        })
      : Promise.resolve(undefined);
    relayed.then(
      (offer) => phoneAnswered(callId, dial, response, offer, phoneOffer),
      (error: unknown) => {
        const refused = error instanceof MediaRefused;
        if (refused) logger.info({ callId }, "sip: the phone offered SRTP and no RTP relay is set");
        else logger.warn({ err: error, callId }, "sip: the RTP relay refused the phone's offer");
        phoneAnswered(callId, dial, response, undefined, phoneOffer, refused ? error.status : 503);
      },
    );
  };

  /**
   * The phone's 2xx with its offer (`offer`: as the relay rewrote it; undefined when there is
   * none to send, `refusal` then the SIP code the call ends with): the trunk is INVITEd with it.
   */
  const phoneAnswered = (
    callId: string,
    dial: DialPayload,
    response: SipResponse,
    offer: string | undefined,
    phoneOffer: string | undefined,
    refusal = 503,
  ) => {
    react(callId, async (tx) => {
      const { callStatus, answered } = await confirmDialog(tx.client, callId, "phone", {
        ...answerOf(response),
        sdp: phoneOffer,
        // Acknowledged at once (RFC 3725 flow IV), so the trunk may ring the whole timeout.
        acked: offer !== undefined,
        ackedWhile: liveStatuses,
      });
      const live = !!callStatus && liveStatuses.includes(callStatus);
      const phone = answered?.confirmed;
      if (!phone) {
        const [row] = (await dialogsOf(tx.client, callId)).filter((d) => d.leg === "phone");
        if (row) tx.afterCommit(() => legs.dropLateAnswer(row, response));
        return;
      }
      if (!live) {
        await legs.close(tx, callId, "phone");
        return;
      }
      if (!offer || !phoneOffer) {
        // 3pcc needs the phone's offer in its 200 (RFC 3725 flow IV): without one (or without
        // the relay's rewrite of it), nothing to send.
        const source = phoneOffer ? "platform" : "caller";
        await ended(tx, callId, {
          cause: "network_error",
          source,
          sipCode: phoneOffer ? refusal : 200,
        });
        await legs.close(tx, callId, "phone");
        return;
      }
      if (answered?.other) return; // the trunk is INVITEd already
      const invite = inviteTrunkDialog(callId, dial, offer);
      const insert = insertDialogStatement(invite);
      tx.defer(insert.text, insert.values);
      const held = ackFor2xx(phone, owner, heldAnswer(phoneOffer));
      tx.afterCommit(() => {
        legs.ack(phone, held);
        startTrunk(invite as Dialog, dial);
      });
    });
  };

  // ---- the trunk leg ----

  const inviteTrunkDialog = (callId: string, dial: DialPayload, offer: string): NewDialog => {
    const target = trunkFailover.first();
    const uri = trunkFailover.uriFor(dial.to, target);
    const transport = target.transport as SipFlow["transport"];
    return callingDialog({
      callId,
      leg: "trunk",
      localUri: `sip:${dial.from}@${ownerHost};user=phone`,
      remoteUri: uri,
      inviteUri: uri,
      flow: { transport, address: target.address, port: target.port },
      offer,
      owner,
      sentBy: endpoint.sentBy(transport),
      instance,
    });
  };

  const startTrunk = (
    dialog: Dialog,
    dial: DialPayload,
    authorization?: Record<string, unknown>,
  ) => {
    const identity = `${dial.identity};info=<${dial.identity_info}>;alg=ES256;ppt=shaken`;
    legs.invite(
      dialog,
      inviteOf(
        dialog,
        { contact: contact(dialog.flow_transport), identity, ...authorization },
        dialog.remote_sdp ?? undefined,
      ),
      trunkFailover.watch(dialog, {
        onResponse: (response) => onTrunkResponse(dialog, dial, response),
        onFailure: (reason) =>
          onLegFailed(dialog.call_id, "trunk", hangupForFailure(reason, "callee")),
        retry: (again) => startTrunk(again, dial),
      }),
    );
  };

  const onTrunkResponse = (dialog: Dialog, dial: DialPayload, response: SipResponse) => {
    const callId = dialog.call_id;
    const setup = setupOf(callId);
    const status = response.status;
    if (status > 100 && status < 200 && carriesSdp(response)) {
      media
        .answer({
          callId,
          offerer: "phone",
          answerer: "trunk",
          sdp: response.content!,
          flow: dialog.flow_address,
        })
        .then(
          (sdp) => earlyMedia(callId, sdp),
          (error: unknown) => {
            logger.warn(
              { err: error, callId },
              "sip: the RTP relay refused the trunk's early media",
            );
            earlyMedia(callId, undefined);
          },
        );
      return;
    }
    if (status === 180 || status === 183) {
      react(callId, (tx) =>
        attached().onCarrierEvent(tx, { type: "ringing", callId, at: new Date() }),
      );
      return;
    }
    if (status < 200) return;
    if (status >= 300) {
      if ((status === 401 || status === 407) && answerTrunkChallenge(dialog, dial, response)) {
        return;
      }
      onLegFailed(callId, "trunk", hangupForStatus(status, "callee"));
      return;
    }
    if (legs.ackAgain(callId, "trunk")) return;
    if (setup.answered.has("trunk")) return;
    setup.answered.add("trunk");
    const trunkAnswer = response.content || undefined;
    const relayed = trunkAnswer
      ? media.answer({
          callId,
          offerer: "phone",
          answerer: "trunk",
          sdp: trunkAnswer,
          flow: dialog.flow_address,
        })
      : Promise.resolve(undefined);
    relayed.then(
      (answer) => trunkAnswered(dialog, response, { answer }),
      (error: unknown) => {
        logger.warn({ err: error, callId }, "sip: the RTP relay refused the trunk's answer");
        trunkAnswered(dialog, response, { failed: true });
      },
    );
  };

  /**
   * The trunk's early media (a 18x with SDP, as the relay rewrote it): the call rings, and the
   * phone (confirmed since its 200) gets it in a re-INVITE; once the phone took it the call
   * records `early_media`.
   */
  const earlyMedia = (callId: string, sdp: string | undefined) => {
    react(callId, async (tx) => {
      await lockCall(tx, callId);
      await attached().onCarrierEvent(tx, { type: "ringing", callId, at: new Date() });
      const [phone] = (await dialogsOf(tx.client, callId)).filter((d) => d.leg === "phone");
      if (!sdp || phone?.state !== "confirmed") return;
      tx.afterCommit(() => {
        void phoneMedia.give(phone, sdp, "early").then((outcome) => {
          if (outcome && outcome.status < 300) {
            react(callId, (next) =>
              attached().onCarrierEvent(next, { type: "early_media", callId }),
            );
          }
        });
      });
    });
  };

  /**
   * The trunk's 2xx (its answer as the relay rewrote it): ACKed, the call answered, and the
   * phone given the answer in a re-INVITE (unless its early media was that SDP already); a
   * phone refusing it fails the call.
   */
  const trunkAnswered = (
    dialog: Dialog,
    response: SipResponse,
    relayed: { answer?: string | undefined; failed?: boolean },
  ) => {
    const callId = dialog.call_id;
    react(callId, async (tx) => {
      const { callStatus, answered } = await legs.confirmAnswer(tx, callId, "trunk", response);
      if (!answered) return;
      if (!callStatus || !liveStatuses.includes(callStatus)) {
        await legs.closeAll(tx, callId);
        return;
      }
      const phone = answered.other;
      if (!phone || phone.state !== "confirmed" || relayed.failed) {
        const sipCode = relayed.failed ? 503 : null;
        await ended(tx, callId, { cause: "network_error", source: "platform", sipCode });
        await legs.closeAll(tx, callId);
        return;
      }
      // Its statement travels with the COMMIT: nothing here reads what it wrote.
      attached().foldCarrierEvent(tx, { type: "answered", callId, at: new Date() });
      tx.afterCommit(() => {
        legs.release(callId);
        if (relayed.answer) connectPhone(phone, relayed.answer);
      });
    });
  };

  const connectPhone = (phone: Dialog, answer: string) => {
    void phoneMedia.give(phone, answer, "answer").then((outcome) => {
      if (!outcome || outcome.status < 300) return;
      const callId = phone.call_id;
      logger.info({ callId, status: outcome.status }, "sip: the phone refused the trunk's answer");
      react(callId, async (tx) => {
        const status = await lockCall(tx, callId);
        if (!status || !liveStatuses.includes(status)) return;
        // The agent never heard the callee: unanswered, so nothing is billable.
        await attached().onCarrierEvent(tx, {
          type: "ended",
          callId,
          at: new Date(),
          hangup: { cause: "network_error", source: "platform", sipCode: outcome.status },
          unanswered: true,
        });
        await legs.closeAll(tx, callId);
      });
    });
  };

  /** Sends the INVITE again with credentials (RFC 3261 §22.2): CSeq + 1, a new branch. */
  const answerTrunkChallenge = (dialog: Dialog, dial: DialPayload, response: SipResponse) => {
    const setup = setupOf(dialog.call_id);
    if (!trunk.username || !trunk.password || setup.challenges >= maxChallenges) return false;
    const proxy = response.status === 407;
    const challenges =
      (proxy ? response.headers["proxy-authenticate"] : response.headers["www-authenticate"]) ?? [];
    const credentials = answerChallenge(challenges, {
      username: trunk.username,
      password: trunk.password,
      method: "INVITE",
      uri: dialog.invite_uri,
    });
    if (!credentials) return false;
    setup.challenges += 1;
    const again: Dialog = {
      ...dialog,
      invite_branch: newClientBranch(),
      invite_cseq: dialog.invite_cseq + 1,
      local_cseq: dialog.invite_cseq + 1,
    };
    react(dialog.call_id, async (tx) => {
      const status = await lockCall(tx, dialog.call_id);
      const [row] = (await dialogsOf(tx.client, dialog.call_id)).filter((d) => d.leg === "trunk");
      if (!status || !liveStatuses.includes(status) || row?.state !== "calling") return;
      await reinvited(tx.client, dialog.call_id, "trunk", again.invite_branch, again.invite_cseq);
      const header = proxy ? "proxy-authorization" : "authorization";
      tx.afterCommit(() => startTrunk(again, dial, { [header]: [credentials] }));
    });
    return true;
  };

  /** A leg's INVITE failed: the call ends as the failure says, the other leg is closed. */
  const onLegFailed = (callId: string, leg: DialogLeg, hangup: Hangup) => {
    react(callId, async (tx) => {
      await lockCall(tx, callId);
      await terminateDialog(tx.client, callId, leg);
      await ended(tx, callId, hangup);
      await legs.closeAll(tx, callId);
    });
  };

  return {
    name: "sip",
    simulated: false,
    attach(target: CarrierEvents, timers: CarrierTimers) {
      events = target;
      timers.register(kinds.invitePhone, {
        run: invitePhone,
        // The phone could not be INVITEd (the database kept failing): the call fails at once.
        exhausted: (tx, action) =>
          ended(tx, action.callId, { cause: "network_error", source: "platform", sipCode: 503 }),
      });
      timers.register(kinds.closeLegs, {
        run: (tx, action) => legs.closeAll(tx, action.callId, finalStatusOf(action.payload)),
      });
      timers.register(inboundKinds.phoneTimeout, { run: inbound.phoneTimedOut });
      timers.register(inboundKinds.answer, {
        run: inbound.invitePhone,
        // The phone could not be INVITEd (the database kept failing): the trunk gets 480.
        exhausted: async (tx, action) => {
          await target.onCarrierEvent(tx, {
            type: "ended",
            callId: action.callId,
            at: new Date(),
            hangup: { cause: "network_error", source: "platform", sipCode: 503 },
            unanswered: true,
          });
          await legs.closeAll(tx, action.callId);
        },
      });
      handleInDialogRequests({
        endpoint,
        events: target,
        lockCall,
        closeLeg: legs.close,
        closedLeg: legs.closed,
        contact,
        sentBy: owner,
        ackWaits,
        media,
        trunkAllow: options.trunkAllow,
        onNewInvite: inbound.onInvite,
      });
      endpoint.handle("CANCEL", inbound.onCancel);
    },
    foldDial(tx: Tx, request: FoldedDial, param: (value: unknown) => string) {
      // dial's timer, over the dialled call `s`: the phone is INVITEd once it committed.
      tx.wakeAt(Date.now());
      return [
        `invite_phone AS (
           INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at, trace_carrier)
           SELECT s.id, ${param(kinds.invitePhone)},
                  jsonb_build_object('seat_id', s.seat_id, 'to', s.to_number, 'from', s.from_number,
                                     'identity', coalesce(s.identity, ''),
                                     'identity_info', ${param(request.identityInfo)}::text),
                  now(), ${param(timerTraceCarrier())}::jsonb
             FROM s)`,
      ];
    },
    async dial(tx: Tx, request: DialRequest) {
      const payload: DialPayload = {
        seat_id: request.seatId,
        to: request.to,
        from: request.from,
        identity: request.identity,
        identity_info: request.identityInfo,
      };
      await tx.schedule({
        callId: request.callId,
        kind: kinds.invitePhone,
        payload: { ...payload },
      });
    },
    answer: (tx, request) => inbound.answer(tx, request.callId),
    async hangup(tx: Tx, request) {
      // A ringing inbound call's INVITE gets the hangup's code (480 timeout, 603 declined).
      const code = request.hangup.sipCode;
      const status = request.direction === "inbound" && code && code >= 400 ? code : 480;
      await tx.schedule({ callId: request.callId, kind: kinds.closeLegs, payload: { status } });
    },
    async recover() {
      const target = attached();
      const stranded = await target.transaction((tx) => strandedCalls(tx.client, owner, instance));
      for (const call of stranded) {
        await target.transaction(async (tx) => {
          const status = await lockCall(tx, call.call_id);
          if (status && liveStatuses.includes(status)) {
            await ended(tx, call.call_id, {
              cause: "network_error",
              source: "platform",
              sipCode: 503,
            });
          }
          await legs.closeAll(tx, call.call_id);
        });
      }
      if (stranded.length > 0) {
        logger.warn(
          { calls: stranded.length },
          "recovery: sip dialogs nobody continues were ended",
        );
      }
      return stranded.length;
    },
    async stop() {
      events = undefined;
      trunkFailover.clear();
      trunkTargets.stop();
      legs.clear();
      ackWaits.clear();
      trunkResponses.clear();
      media.close();
    },
  };
}

export { contactUri } from "./sip-contact.js";
