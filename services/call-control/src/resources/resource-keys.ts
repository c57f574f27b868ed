import {
  DomainError,
  replayOrMismatch,
  requestFingerprint,
  type Queryable,
} from "@switchboard/kit";

/** How long a create's Idempotency-Key names what it made (docs/api.md: 24 hours). */
export const keyWindow = "24 hours";

/** The tables whose rows keep the Idempotency-Key of the create that made them. */
export type KeyedTable = "agents" | "seats" | "routes" | "calls";

/** A create's Idempotency-Key (forwarded by the gateway) and its request's fingerprint. */
export interface KeyedCreate {
  key: string | undefined;
  fingerprint: string;
}

export const keyedCreate = (
  operation: string,
  request: object,
  key: string | undefined,
): KeyedCreate => ({ key, fingerprint: requestFingerprint(operation, request) });

/** The key's columns for an insert: `[idempotency_key, request_fingerprint]`. */
export const keyColumns = (keyed: KeyedCreate): [string | null, string | null] =>
  keyed.key === undefined ? [null, null] : [keyed.key, keyed.fingerprint];

/** Appended to a keyed create's INSERT: a key already taken inserts nothing. */
export const onKeyTaken =
  "ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING";

/**
 * A create under its Idempotency-Key, in one statement when the key is free: `insert` runs an
 * INSERT ending in `onKeyTaken` and returns its row, or undefined when the key was taken. Only
 * then is the key looked up (`byKey`): the same request again (the gateway lost that answer)
 * gets what it made (`replayed`), another request is `idempotency-mismatch`, and a key older
 * than its window is released and the insert tried once more. The unique index on the key
 * serialises racing retries: an insert meeting an uncommitted one waits for it.
 */
export async function createOnce<Made, Found>(
  db: Queryable,
  table: KeyedTable,
  accountId: string,
  key: string | undefined,
  insert: () => Promise<Made | undefined>,
  byKey: () => Promise<Found | undefined>,
): Promise<{ row: Made; replayed: false } | { row: Found; replayed: true }> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const inserted = await insert();
    if (inserted) return { row: inserted, replayed: false };
    if (key === undefined) break;
    const found = await byKey();
    if (found) return { row: found, replayed: true };
    await releaseStaleKey(db, table, accountId, key);
  }
  throw new DomainError("conflict", "the Idempotency-Key is in use; retry the request");
}

/** `byKey` for a resource read by its id: what the key made in its window, through `find`. */
export const findByKey =
  <Row>(
    db: Queryable,
    table: KeyedTable,
    accountId: string,
    keyed: KeyedCreate,
    find: (id: string) => Promise<Row | undefined>,
  ) =>
  async (): Promise<Row | undefined> => {
    const made = await madeByKey(db, table, accountId, keyed);
    return made === undefined ? undefined : find(made);
  };

/**
 * The id of the resource the key made within its window, when the request is the same one;
 * `idempotency-mismatch` for another; undefined when no resource holds the key in its window.
 */
export async function madeByKey(
  db: Queryable,
  table: KeyedTable,
  accountId: string,
  keyed: KeyedCreate,
): Promise<string | undefined> {
  if (keyed.key === undefined) return undefined;
  const { rows } = await db.query<{ id: string; request_fingerprint: string | null }>(
    `SELECT id, request_fingerprint FROM call_control.${table}
      WHERE account_id = $1 AND idempotency_key = $2
        AND created_at > now() - interval '${keyWindow}'`,
    [accountId, keyed.key],
  );
  const row = rows[0];
  return row && replayOrMismatch(row, keyed.fingerprint, row.id);
}

async function releaseStaleKey(db: Queryable, table: KeyedTable, accountId: string, key: string) {
  await db.query(
    `UPDATE call_control.${table} SET idempotency_key = NULL
      WHERE account_id = $1 AND idempotency_key = $2
        AND created_at <= now() - interval '${keyWindow}'`,
    [accountId, key],
  );
}
