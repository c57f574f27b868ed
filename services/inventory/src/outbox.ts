import { injectTraceContext, newId, noteOutboxWrite, type PoolClient } from "@switchboard/kit";

/** The inventory's events (docs/api.md webhook types), written to inventory.outbox. */
export type InventoryEventType =
  "number.held" | "number.assigned" | "number.released" | "number.hold_expired";

export interface InventoryEvent {
  type: InventoryEventType;
  accountId: string;
  /** The number the event is about; `sequence` orders that number's events. */
  resourceId: string;
  sequence: number;
  data: Record<string, unknown>;
}

/**
 * Appends an event in the caller's transaction (withTransaction's client), so it commits
 * together with the state change it describes (docs/architecture.md rule 4); the kit's outbox
 * relay publishes rows whose published_at is null. The sequence is the number's own counter,
 * bumped under the row lock the state change already holds, so it needs no counter table of its
 * own. The commit wakes this process's relay at once (outbox-signal.ts), instead of leaving the
 * event to its idle poll (up to 30 s).
 */
export async function writeEvent(client: PoolClient, event: InventoryEvent): Promise<string> {
  const id = newId("evt");
  noteOutboxWrite(client, "inventory");
  await client.query(
    `INSERT INTO inventory.outbox (id, type, account_id, resource_id, sequence, data, trace_carrier)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      id,
      event.type,
      event.accountId,
      event.resourceId,
      event.sequence,
      JSON.stringify(event.data),
      JSON.stringify(injectTraceContext() ?? null),
    ],
  );
  return id;
}
