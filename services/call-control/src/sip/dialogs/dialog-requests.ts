import { newClientBranch, topVia } from "../stack/client-transactions.js";
import { randomBytes } from "node:crypto";
import { flowOf, type Dialog, type DialogLeg, type NewDialog } from "./dialogs.js";
import sip from "sip";
import { newTag, type SipHeaders, type SipRequest, type SipResponse } from "../stack/message.js";
import type { SipFlow } from "../stack/transport.js";

/**
 * A leg about to be INVITEd by this process (an early dialog we are the UAC of): a new Call-ID,
 * From tag and branch, CSeq 1; `owner` is this process's SIP address (Call-ID host), `sentBy`
 * what its Via says over the leg's transport (the owner's, unless TLS has its own port);
 * `routeSet`, a preloaded Route set (a registered phone's Path).
 */
export function callingDialog(leg: {
  callId: string;
  leg: DialogLeg;
  localUri: string;
  remoteUri: string;
  inviteUri: string;
  flow: SipFlow;
  routeSet?: string[];
  offer: string | null;
  owner: string;
  sentBy?: string;
  instance: string;
}): NewDialog {
  return {
    route_set: leg.routeSet ?? [],
    call_id: leg.callId,
    leg: leg.leg,
    sip_call_id: `${randomBytes(16).toString("hex")}@${leg.owner.replace(/:\d+$/, "")}`,
    local_tag: newTag(),
    local_uri: leg.localUri,
    remote_uri: leg.remoteUri,
    invite_uri: leg.inviteUri,
    invite_branch: newClientBranch(),
    invite_sent_by: leg.sentBy ?? leg.owner,
    invite_cseq: 1,
    local_cseq: 1,
    flow_transport: leg.flow.transport,
    flow_address: leg.flow.address,
    flow_port: leg.flow.port,
    remote_sdp: leg.offer,
    state: "calling",
    owner_address: leg.owner,
    owner_instance: leg.instance,
  };
}

/**
 * Requests of a dialog we are the UAC of (RFC 3261 §12.2.1.1): to the remote target, with the
 * route set, our tag in From and theirs in To. Built from the stored row, so any replica sends
 * them.
 */
export function inDialogRequest(
  dialog: Dialog,
  method: string,
  cseq: number,
  headers: SipHeaders = {},
): SipRequest {
  const request: SipRequest = {
    method,
    uri: dialog.remote_target ?? dialog.invite_uri,
    version: "2.0",
    headers: {
      via: [],
      "max-forwards": "70",
      to: { uri: dialog.remote_uri, params: dialog.remote_tag ? { tag: dialog.remote_tag } : {} },
      from: { uri: dialog.local_uri, params: { tag: dialog.local_tag } },
      "call-id": dialog.sip_call_id,
      cseq: { seq: cseq, method },
      ...headers,
    },
  };
  return withRouteSet(request, dialog.route_set);
}

/** The route set as the request's Route (kept as written: the library writes text unchanged). */
function withRouteSet(request: SipRequest, routeSet: readonly string[] | undefined): SipRequest {
  if (routeSet && routeSet.length > 0) {
    (request.headers as Record<string, unknown>).route = routeSet.join(", ");
  }
  return request;
}

/**
 * The leg's INVITE (again after a challenge: the row has its new CSeq), with its preloaded
 * Route set if it has one (RFC 3261 §8.1.2).
 */
export function inviteOf(
  dialog: Dialog | NewDialog,
  headers: SipHeaders,
  sdp?: string,
): SipRequest {
  const invite = pendingRequest(dialog, "INVITE", {
    ...headers,
    ...(sdp ? { "content-type": "application/sdp" } : {}),
  });
  if (sdp) invite.content = sdp;
  return invite;
}

/** A request of the leg's INVITE transaction: its Request-URI, To without tag, its CSeq number, its Route. */
function pendingRequest(
  dialog: Dialog | NewDialog,
  method: string,
  headers: SipHeaders = {},
): SipRequest {
  const request: SipRequest = {
    method,
    uri: dialog.invite_uri,
    version: "2.0",
    headers: {
      via: [],
      "max-forwards": "70",
      to: { uri: dialog.remote_uri, params: {} },
      from: { uri: dialog.local_uri, params: { tag: dialog.local_tag } },
      "call-id": dialog.sip_call_id,
      cseq: { seq: dialog.invite_cseq, method },
      ...headers,
    },
  };
  return withRouteSet(request, dialog.route_set);
}

/**
 * The ACK of a 2xx (RFC 3261 §13.2.2.4): end to end, the INVITE's CSeq number (the first
 * INVITE's unless `cseq` names a re-INVITE's), a new branch (it is no transaction of ours), the
 * answer SDP when the 2xx carried the offer.
 */
export function ackFor2xx(
  dialog: Dialog,
  sentBy: string,
  sdp?: string,
  cseq = dialog.invite_cseq,
): SipRequest {
  const ack = inDialogRequest(
    dialog,
    "ACK",
    cseq,
    sdp ? { "content-type": "application/sdp" } : {},
  );
  ack.headers.via = [topVia(sentBy, flowOf(dialog), newClientBranch())];
  if (sdp) ack.content = sdp;
  return ack;
}

/**
 * The CANCEL of the leg's pending INVITE (RFC 3261 §9.1), as its own request would be: its
 * Request-URI, its top Via (the sending process's address and branch), its CSeq number, To
 * without tag, its Route (the preloaded route set, still the row's while the leg is calling).
 * Sent by whoever holds the row: the 487 still goes to the INVITE's sender.
 */
export function cancelOf(dialog: Dialog): { request: SipRequest; branch: string; sentBy: string } {
  return {
    request: pendingRequest(dialog, "CANCEL"),
    branch: dialog.invite_branch,
    sentBy: dialog.invite_sent_by,
  };
}

/**
 * What a 2xx to our INVITE says of the dialog (RFC 3261 §12.1.2): the far end's tag, its
 * Contact as remote target, the Record-Route reversed as route set.
 */
export function answerOf(response: SipResponse): {
  tag: string;
  target: string | null;
  routeSet: string[];
} {
  const contact = response.headers.contact;
  const routeSet = recordRouteOf(response).reverse();
  return {
    tag: String(response.headers.to.params.tag ?? ""),
    target: Array.isArray(contact) ? (contact[0]?.uri ?? null) : null,
    routeSet,
  };
}

/** A message's Record-Route entries as written, in order (a UAS's route set, RFC 3261 §12.1.1). */
export function recordRouteOf(message: SipRequest | SipResponse): string[] {
  return routeEntries(message.headers["record-route"] ?? []);
}

/** Entries of a Record-Route or Path header as written: `<uri>;params`, in order. */
export function routeEntries(
  entries: ReadonlyArray<{ uri: sip.SipUri | string; params: Record<string, string | null> }>,
): string[] {
  return entries.map((entry) => {
    const params = Object.entries(entry.params)
      .map(([name, value]) => (value === null ? `;${name}` : `;${name}=${value}`))
      .join("");
    return `<${typeof entry.uri === "string" ? entry.uri : sip.stringifyUri(entry.uri)}>${params}`;
  });
}
