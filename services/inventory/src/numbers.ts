import {
  decodeCursor,
  keysetPage,
  notFound,
  pageLimit,
  type Pool,
  requireAccount,
  withTransaction,
  runOnce,
} from "@switchboard/kit";
import { inventory } from "@switchboard/proto";
import { keyed } from "./keyed-operations.js";
import { writeEvent } from "./outbox.js";
import { numberColumns, toPhoneNumber, type NumberRow } from "./rows.js";

/** Assignment time with microseconds, exact for the keyset comparison. */
const assignedKey = `to_char(n.assigned_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** ListNumbers: the account's assigned numbers, newest assignment first (keyset on time, id). */
export async function listNumbers(
  pool: Pool,
  request: inventory.ListNumbersRequest,
): Promise<inventory.ListNumbersResponse> {
  requireAccount(request.accountId).throwIfAny();
  const limit = pageLimit(request.limit);
  const binding = `numbers:${request.accountId}`;
  const values: unknown[] = [request.accountId, limit + 1];
  let after = "";
  if (request.cursor !== "") {
    const [time, id] = decodeCursor(request.cursor, binding, ["instant", "id"]);
    values.push(time, id);
    after = "AND (n.assigned_at, n.id) < ($3::timestamptz, $4)";
  }
  const result = await pool.query<NumberRow & { assigned_key: string }>(
    `SELECT ${numberColumns}, ${assignedKey} AS assigned_key
       FROM inventory.numbers n
      WHERE n.assigned_account = $1 ${after}
      ORDER BY n.assigned_at DESC, n.id DESC
      LIMIT $2`,
    values,
  );
  const { items, nextCursor, hasMore } = keysetPage(
    result.rows,
    limit,
    binding,
    toPhoneNumber,
    (row) => [row.assigned_key, row.id],
  );
  return { numbers: items, nextCursor, hasMore };
}

/** GetNumber: by `num_` id or E.164; only numbers assigned to the account are found. */
export async function getNumber(
  pool: Pool,
  request: inventory.GetNumberRequest,
): Promise<inventory.PhoneNumber> {
  requireAccount(request.accountId).throwIfAny();
  const key = request.numberIdOrE164;
  const column = key.startsWith("+") ? "n.e164" : "n.id";
  const result = await pool.query<NumberRow>(
    `SELECT ${numberColumns} FROM inventory.numbers n
      WHERE ${column} = $1 AND n.assigned_account = $2`,
    [key, request.accountId],
  );
  if (!result.rows[0]) throw notFound("the number");
  return toPhoneNumber(result.rows[0]);
}

/** FindNumberOwner: the account an E.164 number is assigned to, if any. */
export async function findNumberOwner(
  pool: Pool,
  request: inventory.FindNumberOwnerRequest,
): Promise<inventory.FindNumberOwnerResponse> {
  const result = await pool.query<NumberRow & { owner: string }>(
    `SELECT ${numberColumns}, n.assigned_account AS owner FROM inventory.numbers n
        WHERE n.e164 = $1 AND n.assigned_account IS NOT NULL`,
    [request.number],
  );
  const row = result.rows[0];
  return row ? { accountId: row.owner, number: toPhoneNumber(row) } : {};
}

/**
 * ReleaseNumber: an assigned number goes back to the inventory (`number.released`). Under an
 * Idempotency-Key its retry gets the released number (kit runOnce).
 */
export async function releaseNumber(
  pool: Pool,
  request: inventory.ReleaseNumberRequest,
  idempotencyKey?: string,
): Promise<inventory.PhoneNumber> {
  requireAccount(request.accountId).throwIfAny();
  const key = request.numberId;
  const column = key.startsWith("+") ? "n.e164" : "n.id";
  const once = keyed("release-number", request, idempotencyKey, inventory.PhoneNumber);
  return withTransaction(pool, (client) =>
    runOnce(client, once, async () => {
      const released = await client.query<NumberRow & { event_sequence: number }>(
        `UPDATE inventory.numbers n
          SET assigned_account = NULL, seat_id = NULL, assigned_at = NULL,
              event_sequence = n.event_sequence + 1
        WHERE ${column} = $1 AND n.assigned_account = $2
       RETURNING ${numberColumns}, n.event_sequence`,
        [key, request.accountId],
      );
      const number = released.rows[0];
      if (!number) throw notFound("the number");
      await writeEvent(client, {
        type: "number.released",
        accountId: request.accountId,
        resourceId: number.id,
        sequence: number.event_sequence,
        data: { number_id: number.id, number: number.e164, reason: "number_released" },
      });
      return toPhoneNumber(number);
    }),
  );
}
