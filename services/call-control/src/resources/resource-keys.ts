import { replayByKey, requestFingerprint, type Queryable } from "@switchboard/kit";

/** How long a create's Idempotency-Key names what it made (docs/api.md: 24 hours). */
export const keyWindow = "24 hours";

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
export const keyColumns = (keyed: KeyedCreate | undefined): [string | null, string | null] =>
  keyed?.key === undefined ? [null, null] : [keyed.key, keyed.fingerprint];

/**
 * Inside a create's transaction, before its insert: the id of the resource the key made within
 * its window (the same request again: the gateway lost that answer), `idempotency-mismatch` for
 * another request, or undefined when the key is free. A key older than the window is released
 * here, so the request takes it. kit's advisory lock on the key serialises concurrent retries.
 */
export async function resourceOfKey(
  client: Queryable,
  table: "agents" | "seats" | "routes",
  accountId: string,
  keyed: KeyedCreate | undefined,
): Promise<string | undefined> {
  if (keyed?.key === undefined) return undefined;
  const key = keyed.key;
  return replayByKey(client, {
    scope: `call-control:${table}`,
    accountId,
    key,
    fingerprint: keyed.fingerprint,
    find: async () => {
      const { rows } = await client.query<{ id: string; request_fingerprint: string | null }>(
        `WITH released AS (
           UPDATE call_control.${table} SET idempotency_key = NULL
            WHERE account_id = $1 AND idempotency_key = $2
              AND created_at <= now() - interval '${keyWindow}')
         SELECT id, request_fingerprint FROM call_control.${table}
          WHERE account_id = $1 AND idempotency_key = $2
            AND created_at > now() - interval '${keyWindow}'`,
        [accountId, key],
      );
      return rows[0];
    },
    toResource: (row) => row.id,
  });
}
