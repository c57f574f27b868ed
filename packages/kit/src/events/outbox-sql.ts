/**
 * DDL for the event tables a service keeps in its own schema (docs/architecture.md rules 3 and 4).
 * Kit's `migrate` applies it to the service's schema on every start when the service names the
 * table in `kitTables` (kit-tables.ts); so it must stay idempotent.
 */

const schemaPattern = /^[a-z_][a-z0-9_]{0,62}$/;

/** A schema name safe to interpolate into SQL (lower-case identifier), or a thrown Error. */
export function assertSchemaName(schema: string): string {
  if (!schemaPattern.test(schema)) {
    throw new Error(`invalid schema name ${JSON.stringify(schema)}: use [a-z_][a-z0-9_]*`);
  }
  return schema;
}

/** `"schema".table`, with the schema checked. */
export const qualified = (schema: string, table: string): string =>
  `"${assertSchemaName(schema)}".${table}`;

/** The NOTIFY channel appendEvent signals and the relay listens on. */
export const outboxChannel = (schema: string): string => `${assertSchemaName(schema)}_outbox`;

/**
 * `<schema>.outbox` — one row per event, committed with the state change that produced it —
 * and `<schema>.outbox_sequences`, the per-resource counter that hands out `sequence`.
 * The counter outlives pruned outbox rows, so a resource's sequence never restarts.
 */
export function createOutboxTable(schema: string): string {
  const s = `"${assertSchemaName(schema)}"`;
  return `CREATE TABLE IF NOT EXISTS ${s}.outbox (
  id text PRIMARY KEY CHECK (id LIKE 'evt\\_%'),
  type text NOT NULL,
  account_id text NOT NULL,
  resource_id text NOT NULL,
  sequence bigint NOT NULL CHECK (sequence > 0),
  data jsonb NOT NULL,
  trace_carrier jsonb,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz,
  CONSTRAINT outbox_resource_sequence_key UNIQUE (resource_id, sequence)
);

CREATE INDEX IF NOT EXISTS outbox_unpublished_idx
  ON ${s}.outbox (occurred_at, id) WHERE published_at IS NULL;

CREATE TABLE IF NOT EXISTS ${s}.outbox_sequences (
  resource_id text PRIMARY KEY,
  last_sequence bigint NOT NULL CHECK (last_sequence > 0)
);
`;
}

/**
 * `<schema>.processed_events` — the event ids a consumer (group) has applied, written in the
 * same transaction as the consumer's effect (see consumeOnce).
 */
export function createProcessedEventsTable(schema: string): string {
  const s = `"${assertSchemaName(schema)}"`;
  return `CREATE TABLE IF NOT EXISTS ${s}.processed_events (
  consumer text NOT NULL,
  event_id text NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);

CREATE INDEX IF NOT EXISTS processed_events_processed_at_idx
  ON ${s}.processed_events (processed_at);
`;
}
