import type { Queryable } from "@switchboard/kit";

/** A nonce-count as qop=auth writes it: 8 hex digits (RFC 7616 §3.4). */
export function parseNonceCount(nc: string): number | undefined {
  return /^[0-9a-f]{8}$/i.test(nc) && nc !== "00000000" ? parseInt(nc, 16) : undefined;
}

/**
 * Records one use of `nonce` with nonce-count `nc` (call_control.sip_nonce_uses, shared by the
 * replicas); false when that nonce was already used with this nc or a higher one: a replay.
 * `keepSeconds` must outlast the nonce's life (a stale nonce is refused before it gets here).
 */
export async function claimNonceUse(
  db: Queryable,
  nonce: string,
  nc: number,
  keepSeconds: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO call_control.sip_nonce_uses (nonce, last_nc, expires_at)
     VALUES ($1, $2, now() + make_interval(secs => $3))
     ON CONFLICT (nonce) DO UPDATE SET last_nc = EXCLUDED.last_nc
       WHERE call_control.sip_nonce_uses.last_nc < EXCLUDED.last_nc`,
    [nonce, nc, keepSeconds],
  );
  return rowCount === 1;
}

/** Deletes the uses of nonces that are stale by now; returns how many. */
export async function sweepNonceUses(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM call_control.sip_nonce_uses WHERE expires_at < now()`,
  );
  return rowCount ?? 0;
}
