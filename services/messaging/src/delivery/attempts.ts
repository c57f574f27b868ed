import type { Queryable } from "@switchboard/kit";

export type AttemptOutcome = "accepted" | "rejected" | "error" | "unknown" | "skipped";

/** What is known of how a try ended, beside its outcome. */
export interface AttemptDetails {
  providerMessageId?: string;
  errorCode?: string;
  channel?: string;
}

/**
 * The statement that records how one try ended (the row was written before the carrier was
 * called); `param` adds a value to the statement it goes in (e.g. a CTE of a message's move).
 */
export function finishAttemptSql(
  messageId: string,
  attempt: number,
  outcome: AttemptOutcome,
  details: AttemptDetails,
  param: (value: unknown) => string,
): string {
  return `UPDATE messaging.send_attempts
      SET outcome = ${param(outcome)}, provider_message_id = ${param(details.providerMessageId ?? null)},
          error_code = ${param(details.errorCode ?? null)},
          channel = coalesce(${param(details.channel ?? null)}, channel), finished_at = now()
    WHERE message_id = ${param(messageId)} AND attempt = ${param(attempt)}`;
}

/** Records how one try ended, in a statement of its own. */
export async function finishAttempt(
  db: Queryable,
  messageId: string,
  attempt: number,
  outcome: AttemptOutcome,
  details: AttemptDetails = {},
): Promise<void> {
  const values: unknown[] = [];
  const text = finishAttemptSql(
    messageId,
    attempt,
    outcome,
    details,
    (value) => `$${values.push(value)}`,
  );
  await db.query(text, values);
}
