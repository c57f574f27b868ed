import {
  DomainError,
  notFound,
  type PoolClient,
  requireAccount,
  runOnce,
  withTransaction,
} from "@switchboard/kit";
import { messaging, type wire } from "@switchboard/proto";
import type { MessagingContext } from "../context.js";
import { consentColumns, consentEventData, toConsent, type ConsentRow } from "./rows.js";

/**
 * RevokeConsent: granted → revoked (`consent.revoked`); a revoked consent is 409 invalid-state.
 * Under an Idempotency-Key the retry of the revocation gets the consent it revoked (kit runOnce).
 */
export async function revokeConsent(
  ctx: MessagingContext,
  request: messaging.RevokeConsentRequest,
  idempotencyKey?: string,
): Promise<messaging.Consent> {
  requireAccount(request.accountId).throwIfAny();
  const once = {
    schema: "messaging",
    operation: "revoke-consent",
    accountId: request.accountId,
    key: idempotencyKey,
    request,
    codec: messaging.Consent,
  };
  const consent = await withTransaction(ctx.pool, (client) =>
    runOnce(client, once, async () => {
      const revoked = await revokeWhere(
        ctx,
        client,
        "c.id = $1 AND c.account_id = $2",
        [request.consentId, request.accountId],
        { source: "api", keyword: null },
      );
      if (revoked[0]) return toConsent(revoked[0]);
      const existing = await client.query<{ status: string }>(
        "SELECT status FROM messaging.consents WHERE id = $1 AND account_id = $2",
        [request.consentId, request.accountId],
      );
      if (!existing.rows[0]) throw notFound("the consent");
      throw new DomainError("invalid-state", "the consent is already revoked");
    }),
  );
  ctx.outbox.wake();
  return consent;
}

/**
 * Revokes every granted consent matching `where` (columns of alias `c`) on the caller's
 * transaction, each with its `consent.revoked` event. The UPDATE is guarded on
 * `status = 'granted'`, so a consent is revoked once. Returns the revoked rows.
 */
export async function revokeWhere(
  ctx: MessagingContext,
  client: PoolClient,
  where: string,
  values: unknown[],
  revocation: { source: wire.RevocationSourceValue; keyword: string | null },
): Promise<ConsentRow[]> {
  const n = values.length;
  const { rows } = await client.query<ConsentRow>(
    `UPDATE messaging.consents c
        SET status = 'revoked', revoked_at = now(), revocation_source = $${n + 1},
            revocation_keyword = $${n + 2}
      WHERE ${where} AND c.status = 'granted'
      RETURNING ${consentColumns}`,
    [...values, revocation.source, revocation.keyword],
  );
  const revoked = rows.sort((a, b) => a.id.localeCompare(b.id));
  for (const row of revoked) {
    await ctx.outbox.append(client, {
      type: "consent.revoked",
      accountId: row.account_id,
      resourceId: row.id,
      data: consentEventData(row),
    });
  }
  return revoked;
}
