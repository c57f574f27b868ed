import { DomainError, type Queryable } from "@switchboard/kit";

/** PostgreSQL error codes the resource operations turn into problems. */
export const pgCodes = {
  uniqueViolation: "23505",
  foreignKeyViolation: "23503",
  /** What PostgreSQL 17 (and PGlite) raise for ON DELETE RESTRICT. */
  restrictViolation: "23001",
} as const;

export const hasPgCode = (error: unknown, code: string): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;

export const pgConstraint = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null
    ? ((error as { constraint?: string }).constraint ?? undefined)
    : undefined;

/** A delete refused because a row still references the one deleted (NO ACTION or RESTRICT). */
export const isStillReferenced = (error: unknown): boolean =>
  hasPgCode(error, pgCodes.foreignKeyViolation) || hasPgCode(error, pgCodes.restrictViolation);

/** 409 conflict naming a route that still uses the resource (`column`: agent_id or seat_id). */
export async function usedByRoute(
  pool: Queryable,
  column: "agent_id" | "seat_id",
  id: string,
  what: string,
): Promise<DomainError> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM call_control.routes WHERE ${column} = $1 ORDER BY id LIMIT 1`,
    [id],
  );
  const route = rows[0]?.id;
  return new DomainError(
    "conflict",
    `${route ? `the route ${route}` : "a route"} uses ${what}; change or delete the route first`,
    route ? { extensions: { route_id: route } } : {},
  );
}
