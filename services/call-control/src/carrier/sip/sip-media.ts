import type { DialogLeg } from "../../sip/dialogs/dialogs.js";
import type { RtpRelay } from "../../sip/rtp-relay.js";

/**
 * The SDP the carrier passes from one leg to the other (SIP_RTP_RELAY): through rtpengine, so
 * both legs send their media to the relay (the session is the call id, each side named by its
 * leg); without a relay, unchanged (signalling only).
 */
export interface MediaRelay {
  /** An offer of `offerer`'s leg (`flow`: the address its SIP comes from). */
  offer(options: {
    callId: string;
    offerer: DialogLeg;
    sdp: string;
    flow: string;
  }): Promise<string>;
  /** The answer of `answerer` to `offerer`'s offer. */
  answer(options: {
    callId: string;
    offerer: DialogLeg;
    answerer: DialogLeg;
    sdp: string;
    flow: string;
  }): Promise<string>;
  /** The call ended: its media session goes (failures are the caller's to log). */
  release(callId: string): Promise<void>;
  close(): void;
}

export function createMediaRelay(relay: RtpRelay | undefined): MediaRelay {
  if (!relay) {
    return {
      offer: async ({ sdp }) => sdp,
      answer: async ({ sdp }) => sdp,
      release: async () => undefined,
      close: () => undefined,
    };
  }
  return {
    offer: ({ callId, offerer, sdp, flow }) =>
      relay.offer({ callId, fromTag: offerer, sdp, receivedFrom: flow }),
    answer: ({ callId, offerer, answerer, sdp, flow }) =>
      relay.answer({ callId, fromTag: offerer, toTag: answerer, sdp, receivedFrom: flow }),
    release: (callId) => relay.release(callId),
    close: () => relay.close(),
  };
}
