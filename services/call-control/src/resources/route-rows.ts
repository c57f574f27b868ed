import type { Queryable } from "@switchboard/kit";
import type { callcontrol } from "@switchboard/proto";

export interface RouteRow {
  id: string;
  account_id: string;
  name: string;
  agent: string;
  agent_id: string;
  seat_id: string | null;
  numbers: string[];
  created_at: Date;
  updated_at: Date;
}

/** A route with its agent's current name and its numbers in the order they were given. */
export const routeSelect = `SELECT r.id, r.account_id, r.name, a.name AS agent, r.agent_id, r.seat_id,
    r.created_at, r.updated_at,
    COALESCE((SELECT array_agg(n.e164 ORDER BY n.position) FROM call_control.route_numbers n
               WHERE n.route_id = r.id), '{}'::text[]) AS numbers
  FROM call_control.routes r JOIN call_control.agents a ON a.id = r.agent_id`;

export const toRoute = (row: RouteRow): callcontrol.Route => ({
  id: row.id,
  name: row.name,
  numbers: row.numbers,
  agent: row.agent,
  seatId: row.seat_id ?? undefined,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export async function findRoute(
  db: Queryable,
  accountId: string,
  routeId: string,
): Promise<RouteRow | undefined> {
  const { rows } = await db.query<RouteRow>(
    `${routeSelect} WHERE r.id = $1 AND r.account_id = $2`,
    [routeId, accountId],
  );
  return rows[0];
}

/** The account's route that a number belongs to (inbound delivery). */
export async function findRouteByNumber(
  db: Queryable,
  accountId: string,
  e164: string,
): Promise<RouteRow | undefined> {
  const { rows } = await db.query<RouteRow>(
    `${routeSelect} WHERE r.id = (SELECT route_id FROM call_control.route_numbers
                                   WHERE account_id = $1 AND e164 = $2)`,
    [accountId, e164],
  );
  return rows[0];
}
