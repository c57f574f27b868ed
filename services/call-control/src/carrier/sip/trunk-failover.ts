import { countSipTrunkFailover, type Logger } from "@switchboard/kit";
import type { Tx } from "../../scheduler/tx.js";
import {
  newClientBranch,
  type ClientTransaction,
  type ClientTransactionEvents,
} from "../../sip/stack/client-transactions.js";
import { ackFor2xx, answerOf, inDialogRequest } from "../../sip/dialogs/dialog-requests.js";
import { flowOf, type Dialog } from "../../sip/dialogs/dialogs.js";
import type { SipEndpoint } from "../../sip/stack/endpoint.js";
import type { NameAddress, SipResponse } from "../../sip/stack/message.js";
import type { SipFlow, SipTransportName } from "../../sip/stack/transport.js";
import { trunkRequestUri } from "../../sip/trunk-uris.js";
import { addressKey, type TrunkAddress } from "./trunk-resolver.js";
import type { TrunkTargets } from "./trunk-targets.js";

/** A call's trunk INVITE, as the carrier sends it: its own events, and how it is sent again. */
export interface TrunkAttemptEvents extends ClientTransactionEvents {
  /** Sends the INVITE again as `dialog` says (the next address; its row already says so). */
  retry(dialog: Dialog): void;
}

export interface TrunkFailover {
  /** Where a new call's trunk INVITE goes first. */
  first(): TrunkAddress;
  /** The Request-URI (and To) of the trunk leg for `user` at `target`. */
  uriFor(user: string, target: TrunkAddress): string;
  /**
   * The events to send one INVITE of the call's trunk leg with (its row as `dialog` says):
   * outcomes that say the address failed move the call to the next one, the rest reach
   * `events`.
   */
  watch(dialog: Dialog, events: TrunkAttemptEvents): ClientTransactionEvents;
  clear(): void;
}

/** What happened to an INVITE, as `sip_trunk_failovers_total` counts it. */
type Reason = "status" | "timeout" | "transport";

interface Attempt {
  dialog: Dialog;
  events: TrunkAttemptEvents;
  /** The call went on to another address (or another INVITE): its responses are late ones. */
  superseded: boolean;
  /** A response came (the provisional timer stops). */
  heard: boolean;
  /** A provisional response beyond 100 came: the callee was reached, a failure is the call's. */
  rang: boolean;
  byeSent: boolean;
  timer?: NodeJS.Timeout;
}

interface CallAttempts {
  tried: Set<string>;
  current: Attempt;
}

/** How long a call's record of tried addresses outlives its last INVITE's final outcome. */
const lingerMs = 60_000;

/**
 * RFC 3263 §4.3 for outbound calls' trunk INVITEs: the next address of the trunk is tried
 * when one answers 408 or a 5xx that speaks of the server (500, 502, 503, 504), cannot be sent
 * to, or says nothing at all (not even 100 Trying) within SIP_TRUNK_FAILOVER_TIMEOUT_MS (or
 * before Timer B) — and only while it has not rung (a provisional beyond 100: the callee was
 * reached, so a failure is the call's). The new INVITE is the same call (Call-ID, From tag,
 * offer) with a fresh branch and the next CSeq; the leg's row is moved to the new address
 * before it goes, so any replica CANCELs or BYEs the right one. The address left behind is
 * CANCELled (once it sent a provisional response) and a 2xx it still sends is ACKed and BYEd,
 * so it never becomes a second leg.
 */
export function createTrunkFailover(options: {
  targets: TrunkTargets;
  endpoint: SipEndpoint;
  /** Our Contact on a leg over `transport`. */
  contact(transport: SipTransportName): NameAddress[];
  failoverTimeoutMs: number;
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** Locks the call's row; true while it is live (the order every call transaction takes). */
  lockLiveCall(tx: Tx, callId: string): Promise<boolean>;
  /** The call's trunk INVITE transaction in this process, if any. */
  pendingInvite(callId: string): ClientTransaction | undefined;
  logger: Logger;
}): TrunkFailover {
  const { targets, endpoint, contact, logger } = options;
  const calls = new Map<string, CallAttempts>();
  const quietly: ClientTransactionEvents = {
    onResponse: () => undefined,
    onFailure: () => undefined,
  };
  const keyOf = (dialog: Dialog) => addressKey(dialog.flow_address, dialog.flow_port);
  const uriFor = (user: string, target: TrunkAddress) => trunkRequestUri(user, target.uri);

  const stopTimer = (attempt: Attempt) => {
    if (attempt.timer) clearTimeout(attempt.timer);
    attempt.timer = undefined;
  };
  /** The attempt's INVITE reached its end: the call's record goes a while later. */
  const settled = (attempt: Attempt) => {
    stopTimer(attempt);
    const callId = attempt.dialog.call_id;
    setTimeout(() => {
      if (calls.get(callId)?.current === attempt) calls.delete(callId);
    }, lingerMs).unref();
  };

  /** A 2xx of an INVITE the call left behind: ACKed (each retransmission), then BYEd once. */
  const dropLateAnswer = (attempt: Attempt, response: SipResponse) => {
    const remote = answerOf(response);
    const answered: Dialog = {
      ...attempt.dialog,
      remote_tag: remote.tag,
      remote_target: remote.target,
      route_set: remote.routeSet,
    };
    const flow: SipFlow = flowOf(answered);
    endpoint.transport.send(ackFor2xx(answered, endpoint.sentBy(flow.transport)), flow);
    if (attempt.byeSent) return;
    attempt.byeSent = true;
    logger.info(
      { callId: answered.call_id, address: keyOf(answered) },
      "sip: a trunk address the call left answered late; ACKed and BYEd",
    );
    const bye = inDialogRequest(answered, "BYE", answered.invite_cseq + 1, {
      contact: contact(flow.transport),
    });
    endpoint.client.send(bye, flow, quietly);
  };

  /** Moves the call to its next untried address; false when there is none. */
  const failover = (attempt: Attempt, reason: Reason): boolean => {
    const callId = attempt.dialog.call_id;
    const call = calls.get(callId);
    if (!call || call.current !== attempt) return false;
    const next = targets.forCall().find((target) => !call.tried.has(target.key));
    if (!next) return false;
    attempt.superseded = true;
    stopTimer(attempt);
    countSipTrunkFailover(reason);
    const from = attempt.dialog;
    const user = /^sips?:([^@]*)@/i.exec(from.invite_uri)?.[1] ?? "";
    const uri = uriFor(user, next);
    const transport = next.transport as SipFlow["transport"];
    const again: Dialog = {
      ...from,
      invite_branch: newClientBranch(),
      invite_cseq: from.invite_cseq + 1,
      local_cseq: from.invite_cseq + 1,
      invite_uri: uri,
      remote_uri: uri,
      invite_sent_by: endpoint.sentBy(transport),
      flow_transport: transport,
      flow_address: next.address,
      flow_port: next.port,
    };
    logger.info(
      { callId, from: keyOf(from), to: next.key, reason },
      "sip: the trunk's INVITE goes to the next address",
    );
    options
      .transaction(async (tx) => {
        const moved = (await options.lockLiveCall(tx, callId)) && (await rerouted(tx, from, again));
        tx.afterCommit(() => {
          const pending = options.pendingInvite(callId);
          if (pending?.branch === from.invite_branch) pending.cancel();
          if (moved) attempt.events.retry(again);
          else settled(attempt);
        });
      })
      .catch((error: unknown) => {
        // The call's own time limit ends it (its CANCEL goes to the address its row names).
        logger.error({ err: error, callId }, "sip: could not move the trunk's INVITE");
        settled(attempt);
      });
    return true;
  };

  return {
    first: () => targets.forCall()[0]!,
    uriFor,
    watch(dialog, events) {
      const callId = dialog.call_id;
      const attempt: Attempt = {
        dialog,
        events,
        superseded: false,
        heard: false,
        rang: false,
        byeSent: false,
      };
      const call = calls.get(callId);
      if (call) {
        call.current.superseded = true;
        stopTimer(call.current);
        call.current = attempt;
      } else {
        calls.set(callId, { tried: new Set(), current: attempt });
      }
      calls.get(callId)!.tried.add(keyOf(dialog));
      attempt.timer = setTimeout(() => {
        attempt.timer = undefined;
        if (!attempt.heard && !attempt.superseded) failover(attempt, "timeout");
      }, options.failoverTimeoutMs);
      attempt.timer.unref();
      return {
        onResponse(response) {
          if (attempt.superseded) {
            if (response.status >= 200 && response.status < 300) {
              dropLateAnswer(attempt, response);
            }
            return;
          }
          attempt.heard = true;
          stopTimer(attempt);
          const status = response.status;
          if (status < 200) {
            if (status > 100) attempt.rang = true;
          } else {
            if (status >= 300 && !attempt.rang && failsOver(status)) {
              if (failover(attempt, "status")) return;
            }
            settled(attempt);
          }
          events.onResponse(response);
        },
        onFailure(reason) {
          if (attempt.superseded) return;
          if (!attempt.rang && failover(attempt, reason)) return;
          settled(attempt);
          events.onFailure(reason);
        },
      };
    },
    clear() {
      for (const call of calls.values()) {
        call.current.superseded = true;
        stopTimer(call.current);
      }
      calls.clear();
    },
  };
}

/** Final responses that speak of the server, not the call (RFC 3263 §4.3: 503; 408 and 5xx alike). */
const failsOver = (status: number) => status === 408 || [500, 502, 503, 504].includes(status);

/** The trunk leg's row moves to the next INVITE; false when it is no longer that INVITE's. */
async function rerouted(tx: Tx, from: Dialog, again: Dialog): Promise<boolean> {
  const { rowCount } = await tx.client.query(
    `UPDATE call_control.sip_dialogs
        SET invite_branch = $3, invite_cseq = $4, local_cseq = $4, invite_uri = $5,
            remote_uri = $5, flow_transport = $6, flow_address = $7, flow_port = $8,
            invite_sent_by = $9, updated_at = now()
      WHERE call_id = $1 AND leg = 'trunk' AND state = 'calling' AND invite_branch = $2`,
    [
      from.call_id,
      from.invite_branch,
      again.invite_branch,
      again.invite_cseq,
      again.invite_uri,
      again.flow_transport,
      again.flow_address,
      again.flow_port,
      again.invite_sent_by,
    ],
  );
  return rowCount === 1;
}
