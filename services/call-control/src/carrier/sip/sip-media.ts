import type { DialogLeg } from "../../sip/dialogs/dialogs.js";
import type { RtpRelay } from "../../sip/rtp-relay.js";
import { offersSecureMedia } from "../../sip/stack/sdp.js";

/**
 * An offer the platform cannot carry (SIP status `status`): SRTP from the phone without the RTP
 * relay, which alone translates it to the trunk's plain RTP.
 */
export class MediaRefused extends Error {
  override name = "MediaRefused";
  constructor(readonly status: number) {
    super(`the media offer is refused (${status})`);
  }
}

/**
 * The SDP the carrier passes from one leg to the other (SIP_RTP_RELAY): through rtpengine, so
 * both legs send their media to the relay (the session is the call id, each side named by its
 * leg); without a relay, unchanged (signalling only).
 */
export interface MediaRelay {
  /**
   * An offer of `offerer`'s leg (`flow`: the address its SIP comes from); `secure`: the other
   * leg (a phone on TLS) is given SRTP (RTP/SAVP with SDES keys), else plain RTP. Without the
   * relay, SRTP offered by the phone is refused (MediaRefused, 488).
   */
  offer(options: {
    callId: string;
    offerer: DialogLeg;
    sdp: string;
    flow: string;
    secure: boolean;
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
      offer: async ({ sdp, offerer }) => {
        if (offerer === "phone" && offersSecureMedia(sdp)) throw new MediaRefused(488);
        return sdp;
      },
      answer: async ({ sdp }) => sdp,
      release: async () => undefined,
      close: () => undefined,
    };
  }
  return {
    offer: ({ callId, offerer, sdp, flow, secure }) =>
      relay.offer({
        callId,
        fromTag: offerer,
        sdp,
        receivedFrom: flow,
        profile: secure ? "RTP/SAVP" : "RTP/AVP",
      }),
    answer: ({ callId, offerer, answerer, sdp, flow }) =>
      relay.answer({ callId, fromTag: offerer, toTag: answerer, sdp, receivedFrom: flow }),
    release: (callId) => relay.release(callId),
    close: () => relay.close(),
  };
}
