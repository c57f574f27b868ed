import type { Queryable } from "@switchboard/kit";
import type { SipFlow, SipTransportName } from "../stack/transport.js";

/**
 * Registrations (RFC 3261 §10: bindings of a seat's address-of-record to contact URIs), kept in
 * call_control.sip_registrations so that any replica finds a phone. A row whose expires_at has
 * passed does not count (every read says `expires_at > now()`); rows are removed when their seat
 * registers again, by the sweep, on credential rotation and with the seat.
 */
export interface Binding {
  contact_uri: string;
  call_id: string;
  cseq: string;
  /** Seconds left (rounded up). */
  expires_in: number;
}

/** SQL for the latest live contact of the seat `s` (its registered contact, or null). */
export const liveContactSql = `(SELECT r.contact_uri FROM call_control.sip_registrations r
   WHERE r.seat_id = s.id AND r.expires_at > now()
   ORDER BY r.updated_at DESC, r.contact_uri LIMIT 1)`;

/** The seat's live bindings, oldest first; expired ones are deleted on the way. */
export async function liveBindings(db: Queryable, seatId: string): Promise<Binding[]> {
  await db.query(
    `DELETE FROM call_control.sip_registrations WHERE seat_id = $1 AND expires_at <= now()`,
    [seatId],
  );
  const { rows } = await db.query<Binding>(
    `SELECT contact_uri, call_id, cseq::text AS cseq,
            ceil(extract(epoch FROM expires_at - now()))::int AS expires_in
       FROM call_control.sip_registrations
      WHERE seat_id = $1 AND expires_at > now()
      ORDER BY created_at, contact_uri`,
    [seatId],
  );
  return rows;
}

/**
 * Where a seat's phone is reached: its latest live binding, where its REGISTER came from, and
 * the Path it came through (RFC 3327; empty when it registered directly).
 */
export interface PhoneAddress {
  contact_uri: string;
  transport: SipTransportName;
  source_address: string;
  source_port: number;
  path: string[];
}

/** The latest live binding of the seat `seat` (SQL naming it), as a lateral subquery's body. */
const latestBindingOf = (seat: string) => `SELECT r.contact_uri, r.transport, r.source_address,
       r.source_port, r.path
  FROM call_control.sip_registrations r
 WHERE r.seat_id = ${seat} AND r.expires_at > now()
 ORDER BY r.updated_at DESC, r.contact_uri LIMIT 1`;

/** A call as the step that rings its seat's phone needs it, its row locked. */
export interface CallToPhone {
  status: string;
  seatId: string | null;
  fromNumber: string;
  /** Where the seat's phone is reached, if it is registered. */
  phone: PhoneAddress | undefined;
  /** The call has its phone leg already (the step is a repeat). */
  phoneLeg: boolean;
}

/**
 * Locks the call's row (`FOR UPDATE`, the order every call transaction takes) and reads, in the
 * same statement, where the phone of `seatId` is reached — or, when `seatId` is undefined, the
 * phone of the call's own seat, and whether the call has its phone leg already. Undefined when
 * there is no such call.
 */
export async function lockCallToPhone(
  db: Queryable,
  callId: string,
  seatId?: string | null,
): Promise<CallToPhone | undefined> {
  const { rows } = await db.query<{
    status: string;
    seat_id: string | null;
    from_number: string;
    phone: PhoneAddress | null;
    phone_leg: boolean;
  }>(
    `SELECT c.status, c.seat_id, c.from_number, to_jsonb(b) AS phone,
            EXISTS (SELECT 1 FROM call_control.sip_dialogs d
                     WHERE d.call_id = c.id AND d.leg = 'phone') AS phone_leg
       FROM call_control.calls c
       LEFT JOIN LATERAL (${latestBindingOf("CASE WHEN $3 THEN c.seat_id ELSE $2 END")}) b ON true
      WHERE c.id = $1
        FOR UPDATE OF c`,
    [callId, seatId ?? null, seatId === undefined],
  );
  const row = rows[0];
  return (
    row && {
      status: row.status,
      seatId: row.seat_id,
      fromNumber: row.from_number,
      phone: row.phone ?? undefined,
      phoneLeg: row.phone_leg,
    }
  );
}

export interface NewBinding {
  seatId: string;
  contactUri: string;
  callId: string;
  cseq: number;
  expiresSeconds: number;
  flow: SipFlow;
  /** The SIP address of the replica that took the REGISTER (the TCP connection lives there). */
  receivedBy: string;
  /** The REGISTER's Path entries as written, the nearest proxy first (RFC 3327 §5.3). */
  path: string[];
}

export async function saveBinding(db: Queryable, binding: NewBinding): Promise<void> {
  await db.query(
    `INSERT INTO call_control.sip_registrations
       (seat_id, contact_uri, call_id, cseq, transport, source_address, source_port, received_by,
        expires_at, path)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9), $10)
     ON CONFLICT (seat_id, contact_uri) DO UPDATE
        SET call_id = EXCLUDED.call_id, cseq = EXCLUDED.cseq, transport = EXCLUDED.transport,
            source_address = EXCLUDED.source_address, source_port = EXCLUDED.source_port,
            received_by = EXCLUDED.received_by, expires_at = EXCLUDED.expires_at,
            path = EXCLUDED.path, updated_at = now()`,
    [
      binding.seatId,
      binding.contactUri,
      binding.callId,
      binding.cseq,
      binding.flow.transport,
      binding.flow.address,
      binding.flow.port,
      binding.receivedBy,
      binding.expiresSeconds,
      binding.path,
    ],
  );
}

/** Removes the given contacts' bindings, or every binding of the seat when `contactUris` is absent. */
export async function removeBindings(
  db: Queryable,
  seatId: string,
  contactUris?: string[],
): Promise<void> {
  await db.query(
    `DELETE FROM call_control.sip_registrations
      WHERE seat_id = $1 AND ($2::text[] IS NULL OR contact_uri = ANY($2::text[]))`,
    [seatId, contactUris ?? null],
  );
}

/** Deletes bindings that expired more than `graceSeconds` ago; returns how many. */
export async function sweepExpiredBindings(db: Queryable, graceSeconds: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM call_control.sip_registrations
      WHERE expires_at < now() - make_interval(secs => $1)`,
    [graceSeconds],
  );
  return rowCount ?? 0;
}
