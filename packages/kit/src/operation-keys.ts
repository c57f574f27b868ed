import type { Queryable } from "./db.js";
import { assertSchemaName, qualified } from "./events/outbox-sql.js";
import { checkIdempotencyKey, replayOrMismatch, requestFingerprint } from "./idempotency.js";

/**
 * `<schema>.operation_keys`: the answer of a state change (assign a hold, hang up a call, delete
 * an agent) kept with the Idempotency-Key it ran under, committed in the change's transaction.
 * Creates keep their key on the row they make (idempotency.ts); a change has no row of its own,
 * and its retry would otherwise meet the state it left (409 `invalid-state`, 404). Kit's
 * `migrate` applies it to every schema naming `operation_keys` in `kitTables`; so it must stay
 * idempotent.
 */
export function createOperationKeysTable(schema: string): string {
  const s = `"${assertSchemaName(schema)}"`;
  return `CREATE TABLE IF NOT EXISTS ${s}.operation_keys (
  account_id text NOT NULL,
  operation text NOT NULL,
  idempotency_key text NOT NULL,
  request_fingerprint text NOT NULL,
  response bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, operation, idempotency_key)
);

CREATE INDEX IF NOT EXISTS operation_keys_created_at ON ${s}.operation_keys (created_at);
`;
}

/** How an operation's answer is kept: ts-proto's message codecs fit, and so does `jsonCodec`. */
export interface AnswerCodec<T> {
  encode(answer: T): { finish(): Uint8Array };
  decode(bytes: Uint8Array): T;
}

/** An answer kept as JSON; `revive` rebuilds what JSON does not carry (dates). */
export const jsonCodec = <T>(revive: (parsed: T) => T = (parsed) => parsed): AnswerCodec<T> => ({
  encode: (answer) => ({ finish: () => new TextEncoder().encode(JSON.stringify(answer)) }),
  decode: (bytes) => revive(JSON.parse(new TextDecoder().decode(bytes)) as T),
});

export interface KeyedOperation<T> {
  /** The service's schema (where `operation_keys` is). */
  schema: string;
  /** The operation's name, e.g. `assign-hold`: keys are per account and operation. */
  operation: string;
  accountId: string;
  /** The Idempotency-Key the gateway forwarded; none: the operation just runs. */
  key: string | undefined;
  /** The request, fingerprinted (its accountId left out). */
  request: object;
  codec: AnswerCodec<T>;
}

/** docs/api.md: a key is honoured for 24 hours from first use. */
const window = "24 hours";
/** Expired keys deleted by each write, so the table stays the size of a day. */
const purgeBatch = 16;

/**
 * Inside the state change's transaction: runs it once per key. The same request retried (the
 * gateway lost the first answer: a deadline, a replica killed after the commit) gets the kept
 * answer; another request under the key is `idempotency-mismatch`. A transaction-scoped lock on
 * the key comes first, so a concurrent retry waits for this transaction and then finds its answer.
 */
export async function runOnce<T>(
  client: Queryable,
  op: KeyedOperation<T>,
  change: () => Promise<T>,
): Promise<T> {
  if (op.key === undefined) return change();
  checkIdempotencyKey(op.key);
  const table = qualified(op.schema, "operation_keys");
  const fingerprint = requestFingerprint(op.operation, op.request);
  const id = [op.accountId, op.operation, op.key];
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
    `switchboard:${op.schema}:operation:${id.join(":")}`,
  ]);
  const { rows } = await client.query<{ request_fingerprint: string; response: Uint8Array }>(
    `SELECT request_fingerprint, response FROM ${table}
      WHERE account_id = $1 AND operation = $2 AND idempotency_key = $3
        AND created_at > now() - interval '${window}'`,
    id,
  );
  const kept = rows[0];
  if (kept) return replayOrMismatch(kept, fingerprint, op.codec.decode(kept.response));
  const answer = await change();
  await client.query(
    `WITH purged AS (
       DELETE FROM ${table} WHERE (account_id, operation, idempotency_key) IN (
         SELECT account_id, operation, idempotency_key FROM ${table}
          WHERE created_at <= now() - interval '${window}'
            AND (account_id, operation, idempotency_key) <> ($1, $2, $3)
          LIMIT ${purgeBatch}))
     INSERT INTO ${table} (account_id, operation, idempotency_key, request_fingerprint, response)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (account_id, operation, idempotency_key) DO UPDATE
       SET request_fingerprint = EXCLUDED.request_fingerprint, response = EXCLUDED.response,
           created_at = now()`,
    [...id, fingerprint, Buffer.from(op.codec.encode(answer).finish())],
  );
  return answer;
}
