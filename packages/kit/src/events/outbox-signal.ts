import type pg from "pg";

/**
 * Wakes this process's outbox relays when a transaction that appended to their outbox commits,
 * with no NOTIFY (which serialises busy commits on a global lock, and which PGlite never
 * delivers). appendEvent notes the schema on the transaction's client; withTransaction signals
 * it after COMMIT (or forgets it after ROLLBACK). The relays' polling stays the floor for what
 * other processes write.
 */
const relays = new Map<string, Set<() => void>>();
const pending = new WeakMap<pg.ClientBase, Set<string>>();

/** Registers a relay of `schema`; returns its unregistration. */
export function onOutboxCommitted(schema: string, wake: () => void): () => void {
  const set = relays.get(schema) ?? new Set();
  relays.set(schema, set);
  set.add(wake);
  return () => set.delete(wake);
}

/** Notes that the transaction on `client` appended to `schema`'s outbox. */
export function noteOutboxWrite(client: pg.ClientBase, schema: string): void {
  const schemas = pending.get(client) ?? new Set();
  pending.set(client, schemas);
  schemas.add(schema);
}

/** The transaction on `client` committed: wakes the relays of the outboxes it appended to. */
export function outboxWritesCommitted(client: pg.ClientBase): void {
  wakeOutboxRelays(takeOutboxWrites(client));
}

/**
 * Takes the outboxes the transaction on `client` appended to, for a caller that commits it
 * later, with others on the same client (wakeOutboxRelays once it committed).
 */
export function takeOutboxWrites(client: pg.ClientBase): ReadonlySet<string> {
  const schemas = pending.get(client) ?? new Set<string>();
  pending.delete(client);
  return schemas;
}

/** Wakes this process's relays of `schemas`' outboxes. */
export function wakeOutboxRelays(schemas: Iterable<string>): void {
  for (const schema of schemas) for (const wake of relays.get(schema) ?? []) wake();
}

/** The transaction on `client` rolled back: nothing it appended exists. */
export function outboxWritesRolledBack(client: pg.ClientBase): void {
  pending.delete(client);
}
