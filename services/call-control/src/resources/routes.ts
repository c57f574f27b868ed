import {
  checkE164,
  checkIdempotencyKey,
  cursorId,
  DomainError,
  FieldErrors,
  type IdPage,
  idPage,
  newId,
  notFound,
  pageLimit,
  plannedEachTime,
  type Pool,
  type PoolClient,
  requireAccount,
  requireId,
  withTransaction,
} from "@switchboard/kit";
import type { callcontrol } from "@switchboard/proto";
import type { NumberDirectory } from "../inventory-directory.js";
import { checkAgentName, checkName } from "../validation.js";
import { findAgentByName } from "./agents.js";
import { hasPgCode, pgCodes } from "./pg-errors.js";
import { createOnce, findByKey, keyColumns, keyedCreate, onKeyTaken } from "./resource-keys.js";
import { findRoute, routeSelect, type RouteRow } from "./route-rows.js";
import { findSeat } from "./seats.js";

export const maxRouteNumbers = 100;

interface RouteFields {
  name?: string | undefined;
  numbers?: string[] | undefined;
  agent?: string | undefined;
  /** "" clears the seat (update only). */
  seatId?: string | undefined;
}

function checkFields(errors: FieldErrors, fields: RouteFields) {
  if (fields.name !== undefined) checkName(errors, "#/name", fields.name);
  if (fields.agent !== undefined) checkAgentName(errors, "#/agent", fields.agent);
  if (
    fields.seatId !== undefined &&
    fields.seatId !== "" &&
    !/^seat_[0-9a-z]{26}$/.test(fields.seatId)
  ) {
    errors.add("#/seat_id", "must be a seat id (seat_…)");
  }
  const numbers = fields.numbers ?? [];
  if (numbers.length > maxRouteNumbers)
    errors.add("#/numbers", `must list at most ${maxRouteNumbers} numbers`);
  numbers.forEach((number, index) => {
    checkE164(errors, `#/numbers/${index}`, number);
    if (numbers.indexOf(number) !== index) errors.add(`#/numbers/${index}`, "is listed twice");
  });
}

/**
 * Asks the inventory about the route's numbers. Called before the transaction opens, never
 * inside it: on PGlite (embedded mode) one open transaction holds the only session, so an
 * inventory query made while it is open waits for it — until the inventory deadline.
 */
const ownedNumbers = (directory: NumberDirectory, accountId: string, numbers?: string[]) =>
  Promise.all((numbers ?? []).map((number) => directory.owned(accountId, number)));

/** Resolves names and ids to rows of the account; unknown ones are field errors. */
async function resolve(
  client: PoolClient,
  owned: Awaited<ReturnType<typeof ownedNumbers>>,
  accountId: string,
  fields: RouteFields,
): Promise<{ agentId?: string }> {
  const errors = new FieldErrors();
  const [agent, seat] = await Promise.all([
    fields.agent === undefined ? undefined : findAgentByName(client, accountId, fields.agent),
    fields.seatId ? findSeat(client, accountId, fields.seatId) : undefined,
  ]);
  if (fields.agent !== undefined && !agent)
    errors.add("#/agent", `no agent of this account is named ${fields.agent}`);
  if (fields.seatId && !seat) errors.add("#/seat_id", "is not a seat of this account");
  owned.forEach((number, index) => {
    if (!number) errors.add(`#/numbers/${index}`, "is not a number assigned to this account");
  });
  errors.throwIfAny();
  return agent ? { agentId: agent.id } : {};
}

/** Replaces a route's numbers; a number already in another of the account's routes is a conflict. */
async function setNumbers(
  client: PoolClient,
  accountId: string,
  routeId: string,
  numbers: string[],
) {
  await client.query("DELETE FROM call_control.route_numbers WHERE route_id = $1", [routeId]);
  if (numbers.length === 0) return;
  const taken = await client.query<{ e164: string; route_id: string }>(
    `SELECT e164, route_id FROM call_control.route_numbers WHERE account_id = $1 AND e164 = ANY($2::text[])`,
    [accountId, numbers],
  );
  const first = taken.rows[0];
  if (first) throw numberTaken(first.e164, first.route_id);
  try {
    await client.query(
      `INSERT INTO call_control.route_numbers (account_id, e164, route_id, position)
       SELECT $1, e164, $2, (ordinality - 1)::smallint FROM unnest($3::text[]) WITH ORDINALITY AS t(e164, ordinality)`,
      [accountId, routeId, numbers],
    );
  } catch (error) {
    if (hasPgCode(error, pgCodes.uniqueViolation)) {
      throw new DomainError("conflict", "a number of this route was just added to another route");
    }
    throw error;
  }
}

const numberTaken = (e164: string, routeId: string) =>
  new DomainError("conflict", `the number ${e164} already belongs to the route ${routeId}`, {
    extensions: { number: e164, route_id: routeId },
  });

/** CreateRoute. Under an Idempotency-Key the same request retried gets the route it made. */
export async function createRoute(
  pool: Pool,
  directory: NumberDirectory,
  request: callcontrol.CreateRouteRequest,
  idempotencyKey?: string,
): Promise<RouteRow> {
  const errors = requireAccount(request.accountId);
  checkName(errors, "#/name", request.name);
  checkFields(errors, { ...request, agent: request.agent });
  errors.throwIfAny();
  checkIdempotencyKey(idempotencyKey);
  const keyed = keyedCreate("create-route", request, idempotencyKey);
  const owned = await ownedNumbers(directory, request.accountId, request.numbers);
  return withTransaction(pool, async (client) => {
    const { agentId } = await resolve(client, owned, request.accountId, request);
    const insert = async () => {
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO call_control.routes
           (id, account_id, name, agent_id, seat_id, idempotency_key, request_fingerprint)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ${onKeyTaken} RETURNING id`,
        [
          newId("rte"),
          request.accountId,
          request.name,
          agentId,
          request.seatId ?? null,
          ...keyColumns(keyed),
        ],
      );
      const id = rows[0]?.id;
      if (id === undefined) return undefined;
      await setNumbers(client, request.accountId, id, request.numbers);
      return findRoute(client, request.accountId, id);
    };
    const byKey = findByKey(client, "routes", request.accountId, keyed, (id) =>
      findRoute(client, request.accountId, id),
    );
    return (await createOnce(client, "routes", request.accountId, keyed.key, insert, byKey)).row;
  });
}

export async function getRoute(
  pool: Pool,
  request: callcontrol.GetRouteRequest,
): Promise<RouteRow> {
  requireAccount(request.accountId).throwIfAny();
  const route = await findRoute(
    pool,
    request.accountId,
    requireId(request.routeId, "rte", "the route"),
  );
  if (!route) throw notFound("the route");
  return route;
}

export async function listRoutes(
  pool: Pool,
  request: callcontrol.ListRoutesRequest,
): Promise<IdPage<RouteRow>> {
  requireAccount(request.accountId).throwIfAny();
  const limit = pageLimit(request.limit);
  const binding = `routes:${request.accountId}`;
  const after = cursorId(request.cursor, binding);
  // Planned for its page each time: a generic plan would filter `id < $2` instead of starting there.
  const { rows } = await pool.query<RouteRow>(
    plannedEachTime(
      `${routeSelect} WHERE r.account_id = $1 AND ($2::text IS NULL OR r.id < $2)
        ORDER BY r.id DESC LIMIT $3`,
      [request.accountId, after ?? null, limit + 1],
    ),
  );
  return idPage(rows, limit, binding, (row) => row);
}

export async function updateRoute(
  pool: Pool,
  directory: NumberDirectory,
  request: callcontrol.UpdateRouteRequest,
): Promise<RouteRow> {
  const fields: RouteFields = { ...request, numbers: request.numbers?.numbers };
  const errors = requireAccount(request.accountId);
  checkFields(errors, fields);
  errors.throwIfAny();
  const routeId = requireId(request.routeId, "rte", "the route");
  const owned = await ownedNumbers(directory, request.accountId, fields.numbers);
  return withTransaction(pool, async (client) => {
    const locked = await client.query(
      "SELECT id FROM call_control.routes WHERE id = $1 AND account_id = $2 FOR UPDATE",
      [routeId, request.accountId],
    );
    if (locked.rowCount === 0) throw notFound("the route");
    const { agentId } = await resolve(client, owned, request.accountId, fields);
    await client.query(
      `UPDATE call_control.routes
          SET name = COALESCE($2, name), agent_id = COALESCE($3, agent_id),
              seat_id = CASE WHEN $4::text IS NULL THEN seat_id ELSE NULLIF($4, '') END,
              updated_at = now()
        WHERE id = $1`,
      [routeId, fields.name ?? null, agentId ?? null, fields.seatId ?? null],
    );
    if (fields.numbers) await setNumbers(client, request.accountId, routeId, fields.numbers);
    return (await findRoute(client, request.accountId, routeId))!;
  });
}

export async function deleteRoute(
  pool: Pool,
  request: callcontrol.DeleteRouteRequest,
): Promise<void> {
  requireAccount(request.accountId).throwIfAny();
  const routeId = requireId(request.routeId, "rte", "the route");
  const { rowCount } = await pool.query(
    "DELETE FROM call_control.routes WHERE id = $1 AND account_id = $2",
    [routeId, request.accountId],
  );
  if (!rowCount) throw notFound("the route");
}
