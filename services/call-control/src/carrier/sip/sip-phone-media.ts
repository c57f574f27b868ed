import type { Tx } from "../../scheduler/tx.js";
import type { Dialog } from "../../sip/dialogs/dialogs.js";
import type { SipEndpoint } from "../../sip/stack/endpoint.js";
import type { NameAddress } from "../../sip/stack/message.js";
import type { SipTransportName } from "../../sip/stack/transport.js";
import { relayOffer, type RelayOutcome } from "./sip-relay.js";

/** What this process gave a call's phone: the re-INVITEs queued, the SDP it has. */
export interface PhoneMediaState {
  queue: Promise<unknown>;
  given: string | undefined;
  /** The trunk's answer was queued: early media coming later is stale. */
  answered: boolean;
}

/**
 * The media an outbound call's phone gets after its ACK (RFC 3725 flow IV): its 200 was
 * answered held at once, so the trunk may ring for the call's whole timeout; the trunk's early
 * media (a 183's SDP) and its answer reach the phone in re-INVITEs of the phone's dialog, one
 * at a time (RFC 3261 §14.1), each only when the SDP differs from what the phone has.
 */
export interface PhoneMedia {
  /**
   * Offers `sdp` (`early` media, or the trunk's answer) to the phone once the re-INVITE before
   * it is over: the phone's final answer, or undefined when the phone has that SDP already (or
   * it is early media arriving after the answer).
   */
  give(phone: Dialog, sdp: string, kind: "early" | "answer"): Promise<RelayOutcome | undefined>;
}

export function createPhoneMedia(options: {
  endpoint: SipEndpoint;
  oneStatement<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  contact(transport: SipTransportName): NameAddress[];
  sentBy: string;
  stateOf(callId: string): PhoneMediaState;
}): PhoneMedia {
  return {
    give(phone, sdp, kind) {
      const state = options.stateOf(phone.call_id);
      if (kind === "early" && state.answered) return Promise.resolve(undefined);
      if (kind === "answer") state.answered = true;
      const offer = () =>
        relayOffer({
          endpoint: options.endpoint,
          oneStatement: options.oneStatement,
          other: phone,
          method: "INVITE",
          sdp,
          contact: options.contact,
          sentBy: options.sentBy,
        });
      const turn = state.queue.then(async () => {
        if (state.given === sdp) return undefined;
        let outcome = await offer();
        if (outcome.status === 491) {
          // RFC 3261 §14.1: the phone's own re-INVITE crossed ours; we chose the dialog's
          // Call-ID, so we try again after 2.1–4 s (once).
          await new Promise((resolve) => setTimeout(resolve, 2_100 + Math.random() * 1_900));
          outcome = await offer();
        }
        if (outcome.status < 300) state.given = sdp;
        return outcome;
      });
      state.queue = turn.catch(() => undefined);
      return turn;
    },
  };
}
