import { randomInt } from "node:crypto";
import type { Queryable } from "@switchboard/kit";
import { digestHa1, type DigestAlgorithm } from "../stack/digest.js";

/**
 * A seat's SIP credentials. The username is the seat's id (stable, unique, nothing to look
 * up); the password is random, shown once, and never stored: only the digest HA1 per
 * algorithm, H(username:realm:password), which is all the registrar needs. An HA1 is bound to
 * its realm (SIP_DOMAIN): a realm change leaves every seat unable to register until its
 * credentials are rotated (docs/security.md).
 */
export const sipPasswordPrefix = "sbsip_";
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const randomCharacters = 24;

/** `sbsip_` and 24 characters of [A-Za-z0-9] (~143 bits): nothing a phone's keypad or config quotes. */
export function newSipPassword(): string {
  let password = sipPasswordPrefix;
  for (let i = 0; i < randomCharacters; i++) password += alphabet[randomInt(alphabet.length)];
  return password;
}

export interface SipCredentialRow {
  seat_id: string;
  realm: string;
  ha1_md5: string;
  ha1_sha256: string;
}

/** The HA1 of `row` for `algorithm`. */
export const ha1Of = (row: SipCredentialRow, algorithm: DigestAlgorithm): string =>
  algorithm === "MD5" ? row.ha1_md5 : row.ha1_sha256;

/**
 * Gives the seat a new password (returned, to be shown once): replaces its HA1s and removes its
 * registrations, so a phone with the old password is gone at once. Run it in the transaction
 * that creates or locks the seat.
 */
export async function issueSipCredentials(
  db: Queryable,
  seatId: string,
  realm: string,
): Promise<string> {
  const password = newSipPassword();
  await db.query(
    `INSERT INTO call_control.seat_sip_credentials (seat_id, realm, ha1_md5, ha1_sha256)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (seat_id) DO UPDATE
        SET realm = EXCLUDED.realm, ha1_md5 = EXCLUDED.ha1_md5,
            ha1_sha256 = EXCLUDED.ha1_sha256, issued_at = now()`,
    [
      seatId,
      realm,
      digestHa1("MD5", seatId, realm, password),
      digestHa1("SHA-256", seatId, realm, password),
    ],
  );
  await db.query(`DELETE FROM call_control.sip_registrations WHERE seat_id = $1`, [seatId]);
  return password;
}

/** The credentials of the seat named by a digest username, locked until the transaction ends. */
export async function lockSipCredentials(
  db: Queryable,
  username: string,
): Promise<SipCredentialRow | undefined> {
  if (!/^seat_[0-9a-z]{26}$/.test(username)) return undefined;
  const { rows } = await db.query<SipCredentialRow>(
    `SELECT seat_id, realm, ha1_md5, ha1_sha256 FROM call_control.seat_sip_credentials
      WHERE seat_id = $1 FOR UPDATE`,
    [username],
  );
  return rows[0];
}
