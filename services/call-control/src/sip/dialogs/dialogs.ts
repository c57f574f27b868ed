import type { Queryable } from "@switchboard/kit";
import type { SipRequest } from "../stack/message.js";
import type { SipFlow, SipTransportName } from "../stack/transport.js";

/**
 * A call's SIP dialogs (RFC 3261 §12), one per leg, in call_control.sip_dialogs: what any
 * replica needs to send the leg's BYE or CANCEL. `calling` until the INVITE's 2xx, then
 * `confirmed`, `terminated` once its BYE or CANCEL went out (or a final failure came).
 */
export type DialogLeg = "phone" | "trunk";
export type DialogState = "calling" | "confirmed" | "terminated";

export interface Dialog {
  call_id: string;
  leg: DialogLeg;
  sip_call_id: string;
  local_tag: string;
  remote_tag: string | null;
  local_uri: string;
  remote_uri: string;
  remote_target: string | null;
  route_set: string[];
  invite_uri: string;
  invite_branch: string;
  invite_sent_by: string;
  invite_cseq: number;
  local_cseq: number;
  flow_transport: SipTransportName;
  flow_address: string;
  flow_port: number;
  remote_sdp: string | null;
  state: DialogState;
  acked: boolean;
  owner_address: string;
  owner_instance: string;
  /** The trunk's INVITE of an inbound call (we are its UAS), as its responses need it. */
  server_invite: ServerInvite | null;
}

/** What a response to an INVITE repeats of it (RFC 3261 §8.2.6), our tag in To. */
export type ServerInvite = Pick<SipRequest["headers"], "via" | "from" | "to" | "call-id" | "cseq">;

const columns = `call_id, leg, sip_call_id, local_tag, remote_tag, local_uri, remote_uri,
  remote_target, route_set, invite_uri, invite_branch, invite_sent_by,
  invite_cseq::int AS invite_cseq, local_cseq::int AS local_cseq, flow_transport, flow_address,
  flow_port, remote_sdp, state, acked, owner_address, owner_instance, server_invite`;

const qualified = (alias: string) =>
  columns
    .split(",")
    .map((column) => `${alias}.${column.trim()}`)
    .join(", ");

export const flowOf = (dialog: Dialog): SipFlow => ({
  transport: dialog.flow_transport,
  address: dialog.flow_address,
  port: dialog.flow_port,
});

/**
 * A leg about to be INVITEd; `route_set` is its preloaded Route set (the phone's Path, RFC 3327
 * §5), replaced by the dialog's own when it is confirmed.
 */
export type NewDialog = Omit<
  Dialog,
  "remote_tag" | "remote_target" | "route_set" | "acked" | "server_invite"
> & { route_set?: string[] };

/**
 * The statement that records a leg about to be INVITEd, for a transaction to send with its
 * COMMIT (Tx.defer) once it locked the call's row and found the leg missing. A leg that is there
 * after all (a repeat committed after the statement that looked) fails the transaction on the
 * table's key: its INVITE is never sent twice.
 */
export function insertDialogStatement(dialog: NewDialog): { text: string; values: unknown[] } {
  return {
    text: `INSERT INTO call_control.sip_dialogs
       (call_id, leg, sip_call_id, local_tag, local_uri, remote_uri, invite_uri, invite_branch,
        invite_sent_by, invite_cseq, local_cseq, flow_transport, flow_address, flow_port,
        remote_sdp, state, owner_address, owner_instance, route_set)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
             $19::text[])`,
    values: [
      dialog.call_id,
      dialog.leg,
      dialog.sip_call_id,
      dialog.local_tag,
      dialog.local_uri,
      dialog.remote_uri,
      dialog.invite_uri,
      dialog.invite_branch,
      dialog.invite_sent_by,
      dialog.invite_cseq,
      dialog.local_cseq,
      dialog.flow_transport,
      dialog.flow_address,
      dialog.flow_port,
      dialog.remote_sdp,
      dialog.state,
      dialog.owner_address,
      dialog.owner_instance,
      dialog.route_set ?? [],
    ],
  };
}

/**
 * Records the trunk leg of an inbound call (an early dialog we are the UAS of, RFC 3261
 * §12.1.1): the trunk's tag, target and route set are known from its INVITE, whose CSeq is the
 * last the trunk sent; false when the call already has that leg.
 */
export async function insertServerDialog(
  db: Queryable,
  dialog: NewDialog & {
    remote_tag: string;
    remote_target: string | null;
    route_set: string[];
    server_invite: ServerInvite;
  },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO call_control.sip_dialogs
       (call_id, leg, sip_call_id, local_tag, remote_tag, local_uri, remote_uri, remote_target,
        route_set, invite_uri, invite_branch, invite_sent_by, invite_cseq, local_cseq,
        remote_cseq, flow_transport, flow_address, flow_port, remote_sdp, state, owner_address,
        owner_instance, server_invite)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $13, $15, $16, $17,
             $18, $19, $20, $21, $22)
     ON CONFLICT (call_id, leg) DO NOTHING`,
    [
      dialog.call_id,
      dialog.leg,
      dialog.sip_call_id,
      dialog.local_tag,
      dialog.remote_tag,
      dialog.local_uri,
      dialog.remote_uri,
      dialog.remote_target,
      dialog.route_set,
      dialog.invite_uri,
      dialog.invite_branch,
      dialog.invite_sent_by,
      dialog.invite_cseq,
      dialog.local_cseq,
      dialog.flow_transport,
      dialog.flow_address,
      dialog.flow_port,
      dialog.remote_sdp,
      dialog.state,
      dialog.owner_address,
      dialog.owner_instance,
      JSON.stringify(dialog.server_invite),
    ],
  );
  return rowCount === 1;
}

/** The inbound call whose trunk INVITE this is (its Call-ID and the trunk's tag), if any. */
export async function findServerDialog(
  db: Queryable,
  sipCallId: string,
  remoteTag: string,
): Promise<Dialog | undefined> {
  const { rows } = await db.query<Dialog>(
    `SELECT ${columns} FROM call_control.sip_dialogs
      WHERE sip_call_id = $1 AND remote_tag = $2 AND server_invite IS NOT NULL`,
    [sipCallId, remoteTag],
  );
  return rows[0];
}

/** The call's legs, locked for the caller's transaction. */
export async function dialogsOf(db: Queryable, callId: string): Promise<Dialog[]> {
  const { rows } = await db.query<Dialog>(
    `SELECT ${columns} FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg FOR UPDATE`,
    [callId],
  );
  return rows;
}

/** An in-dialog request's leg, with whether its call is inbound and the call's status. */
export type RequestDialog = Dialog & { inbound: boolean; call_status: string };

/**
 * The SELECT of the leg an in-dialog request belongs to, by its Call-ID (`$1`), our tag (`$2`,
 * its To) and theirs (`$3`, From), with `also` (SQL: more columns over `d`): `findDialog`'s, and
 * the first step of `closeOnPeerBye`.
 */
const requestDialog = (also = "") =>
  `SELECT ${qualified("d")}, c.status AS call_status,
          EXISTS (SELECT 1 FROM call_control.sip_dialogs s
                   WHERE s.call_id = d.call_id AND s.server_invite IS NOT NULL) AS inbound${also}
     FROM call_control.sip_dialogs d JOIN call_control.calls c ON c.id = d.call_id
    WHERE d.sip_call_id = $1 AND d.local_tag = $2 AND d.remote_tag = $3
      FOR UPDATE OF c`;

/**
 * The leg an in-dialog request belongs to: its Call-ID, our tag (its To) and theirs (From);
 * `inbound` when the call is an inbound one (its trunk leg is the one we are the UAS of). The
 * call's row is locked in the same statement (`FOR UPDATE OF c`, the order every call
 * transaction takes: the call first, then its dialogs) and its status read: `call_status`.
 */
export async function findDialog(
  db: Queryable,
  sipCallId: string,
  localTag: string,
  remoteTag: string,
): Promise<RequestDialog | undefined> {
  const { rows } = await db.query<RequestDialog>(requestDialog(), [sipCallId, localTag, remoteTag]);
  return rows[0];
}

/** A new INVITE of the leg (after a digest challenge): its branch and CSeq. */
export async function reinvited(
  db: Queryable,
  callId: string,
  leg: DialogLeg,
  branch: string,
  cseq: number,
): Promise<void> {
  await db.query(
    `UPDATE call_control.sip_dialogs
        SET invite_branch = $3, invite_cseq = $4, local_cseq = $4, updated_at = now()
      WHERE call_id = $1 AND leg = $2`,
    [callId, leg, branch, cseq],
  );
}

/**
 * The CSeq of a new request inside the confirmed leg (RFC 3261 §12.2.1.1: one more than the
 * last), or undefined when the leg is not confirmed any more.
 */
export async function nextCseq(
  db: Queryable,
  callId: string,
  leg: DialogLeg,
): Promise<number | undefined> {
  const { rows } = await db.query<{ cseq: number }>(
    `UPDATE call_control.sip_dialogs SET local_cseq = local_cseq + 1, updated_at = now()
      WHERE call_id = $1 AND leg = $2 AND state = 'confirmed'
     RETURNING local_cseq::int AS cseq`,
    [callId, leg],
  );
  return rows[0]?.cseq;
}

/** A target refresh (a re-INVITE's Contact, or its 2xx's): where the leg's requests go now. */
export async function refreshTarget(
  db: Queryable,
  callId: string,
  leg: DialogLeg,
  target: string,
): Promise<void> {
  await db.query(
    `UPDATE call_control.sip_dialogs SET remote_target = $3, updated_at = now()
      WHERE call_id = $1 AND leg = $2 AND state = 'confirmed'`,
    [callId, leg, target],
  );
}

/** Our 2xx to the trunk's INVITE went out (an inbound call's trunk leg): confirmed. */
export async function confirmServerDialog(
  db: Queryable,
  callId: string,
): Promise<Dialog | undefined> {
  const { rows } = await db.query<Dialog>(
    `UPDATE call_control.sip_dialogs SET state = 'confirmed', updated_at = now()
      WHERE call_id = $1 AND leg = 'trunk' AND state = 'calling' AND server_invite IS NOT NULL
     RETURNING ${columns}`,
    [callId],
  );
  return rows[0];
}

/** A leg's answer confirmed (`confirmDialog`), with the call's other leg when it has one. */
export interface Answered {
  confirmed: Dialog;
  other: Dialog | undefined;
}

/**
 * The 2xx came: the call's row is locked (the order every call transaction takes: the call,
 * then its dialogs) and its status read, and the dialog is confirmed with the far end's tag,
 * target and route set — `acked` when its ACK goes out after this commit, or, given
 * `ackedWhile`, only when the call's status is one of those. With it, in the same statement,
 * the call's other leg (if any), locked as `dialogsOf` locks it: what the answer is passed on
 * to. `answered` is undefined when the leg was not calling any more.
 */
export async function confirmDialog(
  db: Queryable,
  callId: string,
  leg: DialogLeg,
  remote: {
    tag: string;
    target: string | null;
    routeSet: string[];
    sdp?: string | undefined;
    acked: boolean;
    ackedWhile?: readonly string[];
  },
): Promise<{ callStatus: string | undefined; answered: Answered | undefined }> {
  // Each dialog's lock waits on `EXISTS (SELECT 1 FROM call)`, a one-time filter evaluated
  // before its scan starts, so the call's row is always locked first.
  const { rows } = await db.query<Dialog & { call_status: string | null; is_confirmed: boolean }>(
    `WITH call AS (
       SELECT status FROM call_control.calls WHERE id = $1 FOR UPDATE
     ), other AS (
       SELECT ${columns} FROM call_control.sip_dialogs
        WHERE call_id = $1 AND leg <> $2 AND EXISTS (SELECT 1 FROM call) FOR UPDATE
     ), confirmed AS (
       UPDATE call_control.sip_dialogs
          SET state = 'confirmed', remote_tag = $3, remote_target = $4, route_set = $5::text[],
              remote_sdp = COALESCE($6, remote_sdp),
              acked = acked OR ($7 AND ($8::text[] IS NULL
                                        OR (SELECT status FROM call) = ANY($8::text[]))),
              updated_at = now()
        WHERE call_id = $1 AND leg = $2 AND state = 'calling' AND EXISTS (SELECT 1 FROM call)
       RETURNING ${columns}
     ), answer AS (
       SELECT true AS is_confirmed, * FROM confirmed
       UNION ALL
       SELECT false, * FROM other WHERE EXISTS (SELECT 1 FROM confirmed)
     )
     SELECT call.status AS call_status, answer.*
       FROM call LEFT JOIN answer ON true`,
    [
      callId,
      leg,
      remote.tag,
      remote.target,
      remote.routeSet,
      remote.sdp ?? null,
      remote.acked,
      remote.ackedWhile ?? null,
    ],
  );
  const dialogOf = (row: Dialog & { call_status: unknown; is_confirmed: boolean }): Dialog => {
    const { call_status: _, is_confirmed: __, ...dialog } = row;
    return dialog;
  };
  const confirmed = rows.find((row) => row.is_confirmed === true);
  const other = rows.find((row) => row.is_confirmed === false);
  return {
    callStatus: rows[0]?.call_status ?? undefined,
    answered: confirmed && { confirmed: dialogOf(confirmed), other: other && dialogOf(other) },
  };
}

/** The leg's 2xx was ACKed. */
export async function markAcked(db: Queryable, callId: string, leg: DialogLeg): Promise<void> {
  await db.query(
    `UPDATE call_control.sip_dialogs SET acked = true, updated_at = now()
      WHERE call_id = $1 AND leg = $2`,
    [callId, leg],
  );
}

/**
 * The UPDATE that ends the legs of call `call` (SQL: `$1` unless named) that `legs` (SQL over
 * `d`) names and `also` allows, returning each as it is now with the state it was in
 * (`previous_state`): `terminateDialog`'s, and the other leg's when a peer's BYE closes one.
 */
const terminating = (legs: string, also = "", call = "$1") =>
  `UPDATE call_control.sip_dialogs d
      SET state = 'terminated', local_cseq = d.local_cseq + 1, updated_at = now()
     FROM call_control.sip_dialogs old
    WHERE d.call_id = ${call} AND ${legs} AND d.state <> 'terminated'
      AND old.call_id = d.call_id AND old.leg = d.leg ${also}
   RETURNING ${qualified("d")}, old.state AS previous_state`;

/**
 * The CTEs `closed` and `other` of a peer's BYE (RFC 3261 §15.1.2) in leg `leg` of call `call`
 * (SQL expressions), its CSeq `cseq` taken as in `acceptRemoteCseq` when `gate` (SQL) holds: the
 * leg is terminated (`closed`: whether it was open, no row when the CSeq is out of order), and
 * with it the call's other leg as `terminateDialog` ends it (`other`).
 */
const closingByPeer = (call: string, leg: string, cseq: string, gate = "") =>
  `closed AS (
       UPDATE call_control.sip_dialogs d
          SET remote_cseq = ${cseq}, state = 'terminated', updated_at = now()
         FROM call_control.sip_dialogs old
        WHERE d.call_id = ${call} AND d.leg = ${leg} ${gate}
          AND (d.remote_cseq IS NULL OR d.remote_cseq < ${cseq})
          AND old.call_id = d.call_id AND old.leg = d.leg
       RETURNING old.state <> 'terminated' AS was_open
     ), other AS (
       ${terminating(`d.leg <> ${leg}`, "AND EXISTS (SELECT 1 FROM closed)", call)}
     )`;

/** What a peer's BYE closed: whether its leg was open, and the other leg as it ended. */
export interface ClosedByPeer {
  wasOpen: boolean;
  other: (Dialog & { previous_state: DialogState }) | undefined;
}

/**
 * The leg is over (its BYE or CANCEL is about to go, or it failed): the row with the CSeq its
 * BYE takes and the state it was in, or undefined when it was over already.
 */
export async function terminateDialog(
  db: Queryable,
  callId: string,
  leg: DialogLeg,
): Promise<(Dialog & { previous_state: DialogState }) | undefined> {
  const { rows } = await db.query<Dialog & { previous_state: DialogState }>(
    terminating("d.leg = $2"),
    [callId, leg],
  );
  return rows[0];
}

/**
 * A request of the far end inside the leg (RFC 3261 §12.2.2): true when its CSeq is above the
 * last one seen (and now the last), false when it is out of order (answered 500).
 */
export async function acceptRemoteCseq(
  db: Queryable,
  callId: string,
  leg: DialogLeg,
  cseq: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE call_control.sip_dialogs SET remote_cseq = $3, updated_at = now()
      WHERE call_id = $1 AND leg = $2 AND (remote_cseq IS NULL OR remote_cseq < $3)`,
    [callId, leg, cseq],
  );
  return rowCount === 1;
}

/**
 * The far end's BYE (RFC 3261 §15.1.2), its CSeq taken as in `acceptRemoteCseq`: the leg is
 * terminated, and with it, in the same statement, the call's other leg as `terminateDialog`
 * ends it (`other`: its row, undefined when it was over already). Undefined when the CSeq is out
 * of order (answered 500, nothing changed); `wasOpen` false when the leg was over already.
 */
export async function closedByPeer(
  db: Queryable,
  callId: string,
  leg: DialogLeg,
  cseq: number,
): Promise<ClosedByPeer | undefined> {
  const { rows } = await db.query<{
    was_open: boolean;
    other: (Dialog & { previous_state: DialogState }) | null;
  }>(
    `WITH ${closingByPeer("$1", "$2", "$3")}
     SELECT closed.was_open, (SELECT to_jsonb(other) FROM other) AS other FROM closed`,
    [callId, leg, cseq],
  );
  const row = rows[0];
  return row && { wasOpen: row.was_open, other: row.other ?? undefined };
}

/**
 * A far end's BYE in one statement: its dialog found and the call locked as `findDialog` finds
 * and locks them, and, when it came from the leg's peer as `fromDialogPeerAddress` judges by
 * address (`source`, and `trunkAllowed`: whether SIP_TRUNK_ALLOW admits it), the leg closed as
 * `closedByPeer` closes it. `peer` false: nothing changed (for a trunk named by DNS the caller
 * asks `fromDialogPeer`, then `closedByPeer`); `closed` undefined: the CSeq was out of order.
 */
export async function closeOnPeerBye(
  db: Queryable,
  request: { sipCallId: string; localTag: string; remoteTag: string; cseq: number },
  source: { address: string; trunkAllowed: boolean },
): Promise<{ dialog: RequestDialog; peer: boolean; closed: ClosedByPeer | undefined } | undefined> {
  // `closed` and `other` name their call by `(SELECT call_id FROM found)`, evaluated before
  // their scans start, so the call's row is locked (by `found`) before any dialog's.
  const { rows } = await db.query<
    RequestDialog & {
      peer: boolean;
      closed_any: boolean;
      was_open: boolean | null;
      other: (Dialog & { previous_state: DialogState }) | null;
    }
  >(
    `WITH found AS (
       ${requestDialog(", (d.flow_address = $5 OR (d.leg = 'trunk' AND $6::boolean)) AS peer")}
     ), ${closingByPeer(
       "(SELECT call_id FROM found)",
       "(SELECT leg FROM found)",
       "$4::int",
       "AND (SELECT peer FROM found)",
     )}
     SELECT found.*, EXISTS (SELECT 1 FROM closed) AS closed_any,
            (SELECT was_open FROM closed) AS was_open,
            (SELECT to_jsonb(other) FROM other) AS other
       FROM found`,
    [
      request.sipCallId,
      request.localTag,
      request.remoteTag,
      request.cseq,
      source.address,
      source.trunkAllowed,
    ],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { peer, closed_any, was_open, other, ...dialog } = row;
  return {
    dialog,
    peer,
    closed: closed_any ? { wasOpen: was_open === true, other: other ?? undefined } : undefined,
  };
}

/**
 * Calls with a leg still open that the process at `ownerAddress` (a previous life of it)
 * cannot continue: the call ended, or the leg's setup ran in another process instance (its
 * client transactions are gone). A ringing inbound call's trunk INVITE is not one: its final
 * response is built from the row.
 */
export async function strandedCalls(
  db: Queryable,
  ownerAddress: string,
  ownerInstance: string,
): Promise<{ call_id: string; live: boolean }[]> {
  const { rows } = await db.query<{ call_id: string; live: boolean }>(
    `SELECT DISTINCT d.call_id, c.status IN ('queued', 'initiated', 'ringing', 'in_progress') AS live
       FROM call_control.sip_dialogs d JOIN call_control.calls c ON c.id = d.call_id
      WHERE d.state <> 'terminated'
        AND (c.status NOT IN ('queued', 'initiated', 'ringing', 'in_progress')
             OR (d.owner_address = $1 AND d.owner_instance <> $2
                 AND (d.state = 'calling' OR NOT d.acked)
                 -- the trunk's INVITE of an inbound call is answered from its row, by anyone
                 AND NOT (d.server_invite IS NOT NULL AND d.state = 'calling')))`,
    [ownerAddress, ownerInstance],
  );
  return rows;
}
