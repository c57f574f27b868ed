import { createOutboxTable, createProcessedEventsTable } from "./events/outbox-sql.js";
import { createOperationKeysTable } from "./operation-keys.js";
import { createSigningKeysTable } from "./signing/signing-keys-sql.js";

/**
 * The tables kit's own modules read and write in a service's schema, by name: `outbox` (with
 * `outbox_sequences`: appendEvent and the relay), `processed_events` (consumeOnce),
 * `signing_keys` (the signing key store) and `operation_keys` (runOnce). `migrate` applies the
 * ones a service names in `kitTables` to its schema on every start, after the service's own
 * migrations. Each DDL is
 * idempotent (`IF NOT EXISTS`, and so must every later change to it be, e.g.
 * `ADD COLUMN IF NOT EXISTS`): it runs over databases whose tables an older copy in a
 * service's migration created, and over databases it created itself.
 */
export const kitTables = {
  outbox: createOutboxTable,
  processed_events: createProcessedEventsTable,
  signing_keys: createSigningKeysTable,
  operation_keys: createOperationKeysTable,
} as const satisfies Record<string, (schema: string) => string>;

export type KitTable = keyof typeof kitTables;
