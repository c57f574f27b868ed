import type { Queryable } from "@switchboard/kit";
import type { LedgerRow } from "./ledger-record.js";

/**
 * Appends signed records in one statement. `ON CONFLICT DO NOTHING` makes every append
 * idempotent: a record whose request id (api.request) or source event id (business facts) is
 * already in the ledger is skipped, so a redelivered batch never duplicates. Returns the ids
 * of the records that were new.
 */
export async function appendRecords(db: Queryable, rows: readonly LedgerRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const column = <K extends keyof LedgerRow>(key: K) => rows.map((row) => row[key]);
  const { rows: inserted } = await db.query<{ id: string }>(
    `INSERT INTO usage.records
       (id, kind, occurred_at, account_id, request_id, event_id, resource_id, kid, payload, signature)
     SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[],
                          $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
     ON CONFLICT DO NOTHING
     RETURNING id`,
    [
      column("id"),
      column("kind"),
      column("occurredAt"),
      column("accountId"),
      column("requestId"),
      column("eventId"),
      column("resourceId"),
      column("kid"),
      column("payload"),
      column("signature"),
    ],
  );
  return inserted.map((row) => row.id);
}
