import type { Dialog, ServerInvite } from "./dialogs.js";
import {
  reasonPhrases,
  type SipHeaders,
  type SipRequest,
  type SipResponse,
} from "../stack/message.js";

/** What a response to the INVITE needs of it (our tag already in its To). */
export function serverInviteOf(request: SipRequest, localTag: string): ServerInvite {
  return {
    via: request.headers.via,
    from: request.headers.from,
    to: { ...request.headers.to, params: { ...request.headers.to.params, tag: localTag } },
    "call-id": request.headers["call-id"],
    cseq: request.headers.cseq,
  };
}

/**
 * A response to the trunk's INVITE built from the leg's row (RFC 3261 §8.2.6: its Via list,
 * From, Call-ID and CSeq, its To with our tag), so that any replica can send it. Undefined for
 * a leg we are not the UAS of.
 */
export function responseFromRow(
  row: Dialog,
  status: number,
  headers: SipHeaders = {},
): SipResponse | undefined {
  const invite = row.server_invite;
  if (!invite) return undefined;
  return {
    status,
    reason: reasonPhrases[status] ?? "",
    version: "2.0",
    headers: {
      via: invite.via.map((via) => ({ ...via, params: { ...via.params } })),
      to: invite.to,
      from: invite.from,
      "call-id": invite["call-id"],
      cseq: invite.cseq,
      ...headers,
    },
  };
}
