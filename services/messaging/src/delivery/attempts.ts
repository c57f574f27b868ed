import type { Queryable } from "@switchboard/kit";

export type AttemptOutcome = "accepted" | "rejected" | "error" | "unknown" | "skipped";

/** Records how one try ended (the row was written before the carrier was called). */
export async function finishAttempt(
  db: Queryable,
  messageId: string,
  attempt: number,
  outcome: AttemptOutcome,
  details: { providerMessageId?: string; errorCode?: string; channel?: string } = {},
): Promise<void> {
  await db.query(
    `UPDATE messaging.send_attempts
        SET outcome = $3, provider_message_id = $4, error_code = $5,
            channel = coalesce($6, channel), finished_at = now()
      WHERE message_id = $1 AND attempt = $2`,
    [
      messageId,
      attempt,
      outcome,
      details.providerMessageId ?? null,
      details.errorCode ?? null,
      details.channel ?? null,
    ],
  );
}
