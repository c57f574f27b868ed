import type { Queryable } from "@switchboard/kit";
import type { SecretBox } from "./secret-box.js";
import { newSigningSecret, secretKey } from "./signature.js";

/**
 * A subscription's signing secrets in `webhook.subscription_secrets`: one current (no expiry)
 * and, after a rotation, the previous one until its overlap ends. Never more than two sign.
 */

/** Stores a new current secret for the subscription; returns it in clear (shown once). */
export async function addCurrentSecret(
  db: Queryable,
  box: SecretBox,
  subscriptionId: string,
): Promise<string> {
  const secret = newSigningSecret();
  await db.query(
    `INSERT INTO webhook.subscription_secrets (subscription_id, sealed) VALUES ($1, $2)`,
    [subscriptionId, box.seal(secret, subscriptionId)],
  );
  return secret;
}

/**
 * Rotation, in the caller's transaction (with the subscription row locked): a secret still in
 * its overlap from an earlier rotation stops now, the current one signs for `overlapMs` more,
 * and a new current one is stored and returned.
 */
export async function rotateSecret(
  db: Queryable,
  box: SecretBox,
  subscriptionId: string,
  overlapMs: number,
): Promise<string> {
  await db.query(
    `UPDATE webhook.subscription_secrets SET expires_at = now()
      WHERE subscription_id = $1 AND expires_at > now()`,
    [subscriptionId],
  );
  await db.query(
    `UPDATE webhook.subscription_secrets
        SET expires_at = now() + $2 * interval '1 millisecond'
      WHERE subscription_id = $1 AND expires_at IS NULL`,
    [subscriptionId, overlapMs],
  );
  return addCurrentSecret(db, box, subscriptionId);
}

/** The current secret in clear (an idempotent replay of the creation shows it again). */
export async function currentSecret(
  db: Queryable,
  box: SecretBox,
  subscriptionId: string,
): Promise<string> {
  const { rows } = await db.query<{ sealed: string }>(
    `SELECT sealed FROM webhook.subscription_secrets
      WHERE subscription_id = $1 AND expires_at IS NULL`,
    [subscriptionId],
  );
  if (!rows[0]) throw new Error(`subscription ${subscriptionId} has no current secret`);
  return box.open(rows[0].sealed, subscriptionId);
}

/** SQL: the sealed secrets in force for `s.id`, newest first (for a lateral or subquery). */
export const sealedSecretsInForce = `ARRAY(SELECT x.sealed FROM webhook.subscription_secrets x
  WHERE x.subscription_id = s.id AND (x.expires_at IS NULL OR x.expires_at > now())
  ORDER BY x.created_at DESC, x.id DESC)`;

/** HMAC keys from sealed secrets. */
export const openKeys = (
  box: SecretBox,
  subscriptionId: string,
  sealed: readonly string[],
): Buffer[] => sealed.map((envelope) => secretKey(box.open(envelope, subscriptionId)));

/** Removes a deleted subscription's secrets: nothing signs for it any more. */
export async function dropSecrets(db: Queryable, subscriptionId: string): Promise<void> {
  await db.query(`DELETE FROM webhook.subscription_secrets WHERE subscription_id = $1`, [
    subscriptionId,
  ]);
}
