import type { Hangup } from "../calls/states.js";
import type { Tx } from "../scheduler/tx.js";
import { findDialog, type DialogLeg } from "../sip/dialogs.js";
import type { SipEndpoint, SipRequestContext } from "../sip/endpoint.js";
import { responseTo, type SipRequest } from "../sip/message.js";
import type { CarrierEvents } from "./carrier.js";

/**
 * Requests the phone or the trunk sends inside a call's dialogs (docs/api.md "Voice over SIP"):
 * a BYE ends the call (the phone is the caller's side, the trunk the callee's) and closes the
 * other leg; a re-INVITE or UPDATE is refused with 488 (the session is not renegotiated: media
 * stays as first agreed); a request of no dialog we know gets 481. A new INVITE (no To tag) is
 * an inbound call, which this carrier does not take yet: 403.
 */
export function handleInDialogRequests(options: {
  endpoint: SipEndpoint;
  events: CarrierEvents;
  lockCall(tx: Tx, callId: string): Promise<string | undefined>;
  closeLeg(tx: Tx, callId: string, leg: DialogLeg): Promise<void>;
}): void {
  const { endpoint, events, lockCall, closeLeg } = options;

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
      const source = dialog.leg === "phone" ? "caller" : "callee";
      const hangup: Hangup =
        callStatus === "in_progress"
          ? { cause: "normal_clearing", source, sipCode: 200 }
          : { cause: "originator_cancel", source, sipCode: 487 };
      const closed = await tx.client.query(
        `UPDATE call_control.sip_dialogs SET state = 'terminated', updated_at = now()
          WHERE call_id = $1 AND leg = $2 AND state <> 'terminated'`,
        [dialog.call_id, dialog.leg],
      );
      if (closed.rowCount === 1) {
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

  const refuseRenegotiation = async (request: SipRequest, { respond }: SipRequestContext) => {
    if (!request.headers.to.params.tag) {
      respond(responseTo(request, 403));
      return;
    }
    const dialog = await events.transaction((tx) => dialogOf(tx, request));
    respond(
      dialog && dialog.state !== "terminated" ? responseTo(request, 488) : responseTo(request, 481),
    );
  };
  endpoint.handle("INVITE", refuseRenegotiation);
  endpoint.handle("UPDATE", async (request, context) => {
    if (!request.headers.to.params.tag) {
      context.respond(responseTo(request, 481));
      return;
    }
    await refuseRenegotiation(request, context);
  });
}
