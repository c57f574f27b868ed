/**
 * The sandbox network's deterministic behaviour (docs/api.md "Carriers: the real networks and the sandbox"), by the last
 * digit of a destination in +1555020xxxx:
 *
 * | digit | outcome |
 * |---|---|
 * | 0 | delivered (RCS: then read) |
 * | 1 | undelivered (the network took it; the handset never got it) |
 * | 2 | failed (the network refuses the message at submit) |
 * | 3 | not RCS-capable: RCS falls back when `fallback` allows, else fails; SMS/MMS delivered |
 * | 4 | the network is congested: every submit is refused for now, so the message retries with backoff until it expires (TTL) or its tries run out (failed) |
 * | 5 | the network takes the first submit but its answer is lost (timeout); the retry is recognised by its client reference and not sent again; delivered |
 * | 6 | the first submit is refused for now (throttled); the retry is taken; delivered |
 * | 7–9 | delivered |
 *
 * Any other destination is delivered (and RCS-capable). Digits 4–6 are this implementation's
 * additions for exercising retries; 0–3 are the contract's.
 */
export type SandboxBehaviour =
  | "delivered"
  | "undelivered"
  | "rejected"
  | "not-rcs-capable"
  | "congested"
  | "answer-lost-once"
  | "throttled-once";

const sandboxRange = /^\+1555020\d{3}(\d)$/;

export function sandboxBehaviour(to: string): SandboxBehaviour {
  const digit = sandboxRange.exec(to)?.[1];
  switch (digit) {
    case "1":
      return "undelivered";
    case "2":
      return "rejected";
    case "3":
      return "not-rcs-capable";
    case "4":
      return "congested";
    case "5":
      return "answer-lost-once";
    case "6":
      return "throttled-once";
    default:
      return "delivered";
  }
}
