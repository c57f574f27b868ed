import type { SipRequest } from "../../sip/stack/message.js";

/** What identifies the ACK of a 2xx we sent: the INVITE's Call-ID, CSeq number and From tag. */
export interface AckKey {
  callId: string;
  cseq: number;
  fromTag: string;
}

export interface AckWaits {
  /**
   * Our 2xx to an INVITE, retransmitted by the TU (RFC 3261 §13.3.1.4): `again` runs at T1,
   * doubling to T2, until its ACK comes from an address `fromPeer` accepts (`onAcked` then
   * runs) or 64·T1 passed.
   */
  untilAcked(
    key: AckKey,
    again: () => void,
    fromPeer: (address: string) => boolean,
    onAcked?: () => void,
  ): void;
  /**
   * An ACK came from `source`: stops the retransmissions it answers; false when none waited for
   * it, or the ACK is not from the dialog's peer (ignored).
   */
  acked(request: SipRequest, source: string): boolean;
  /** Stops every retransmission (the carrier stops). */
  clear(): void;
}

const keyText = (key: AckKey) => `${key.callId}|${key.cseq}|${key.fromTag}`;

export function createAckWaits(options: { t1Ms?: number } = {}): AckWaits {
  const t1Ms = options.t1Ms ?? 500;
  const t2Ms = 4_000;
  const waiting = new Map<
    string,
    {
      stop(): void;
      fromPeer: (address: string) => boolean;
      onAcked: (() => void) | undefined;
    }
  >();

  return {
    untilAcked(key, again, fromPeer, onAcked) {
      const text = keyText(key);
      waiting.get(text)?.stop();
      let interval = t1Ms;
      let timer: NodeJS.Timeout;
      const stop = () => {
        clearTimeout(timer);
        clearTimeout(limit);
        waiting.delete(text);
      };
      const tick = () => {
        again();
        interval = Math.min(interval * 2, t2Ms);
        timer = setTimeout(tick, interval).unref();
      };
      timer = setTimeout(tick, interval).unref();
      const limit = setTimeout(stop, 64 * t1Ms).unref();
      waiting.set(text, { stop, fromPeer, onAcked });
    },
    acked(request, source) {
      const text = keyText({
        callId: request.headers["call-id"],
        cseq: request.headers.cseq.seq,
        fromTag: String(request.headers.from.params.tag ?? ""),
      });
      const wait = waiting.get(text);
      if (!wait || !wait.fromPeer(source)) return false;
      wait.stop();
      wait.onAcked?.();
      return true;
    },
    clear() {
      for (const wait of [...waiting.values()]) wait.stop();
    },
  };
}
