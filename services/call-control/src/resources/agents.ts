import {
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
  type Queryable,
  requireAccount,
  requireId,
} from "@switchboard/kit";
import type { callcontrol } from "@switchboard/proto";
import { checkAgentName } from "../validation.js";
import { hasPgCode, isStillReferenced, pgCodes, usedByRoute } from "./pg-errors.js";
import { createOnce, findByKey, keyColumns, keyedCreate, onKeyTaken } from "./resource-keys.js";

export interface AgentRow {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  created_at: Date;
  updated_at: Date;
}

const columns = "id, account_id, name, description, created_at, updated_at";
const maxDescription = 1024;

export const toAgent = (row: AgentRow): callcontrol.Agent => ({
  id: row.id,
  name: row.name,
  description: row.description ?? undefined,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** The account's agent of that name, or undefined. */
export async function findAgentByName(
  db: Queryable,
  accountId: string,
  name: string,
): Promise<AgentRow | undefined> {
  const { rows } = await db.query<AgentRow>(
    `SELECT ${columns} FROM call_control.agents WHERE account_id = $1 AND name = $2`,
    [accountId, name],
  );
  return rows[0];
}

function checkDescription(errors: FieldErrors, description: string | undefined) {
  if (description !== undefined && description.length > maxDescription) {
    errors.add("#/description", `must be at most ${maxDescription} characters`);
  }
}

const nameTaken = (name: string) =>
  new DomainError("conflict", `the account already has an agent named ${name}`);

/**
 * CreateAgent: one INSERT, the key's lookup only when its key was taken (resource-keys.ts), so
 * the same request retried gets the agent it made.
 */
export async function createAgent(
  pool: Pool,
  request: callcontrol.CreateAgentRequest,
  idempotencyKey?: string,
): Promise<AgentRow> {
  const errors = requireAccount(request.accountId);
  checkAgentName(errors, "#/name", request.name);
  checkDescription(errors, request.description);
  errors.throwIfAny();
  checkIdempotencyKey(idempotencyKey);
  const keyed = keyedCreate("create-agent", request, idempotencyKey);
  const insert = async () => {
    const { rows } = await pool.query<AgentRow>(
      `INSERT INTO call_control.agents
         (id, account_id, name, description, idempotency_key, request_fingerprint)
       VALUES ($1, $2, $3, $4, $5, $6) ${onKeyTaken} RETURNING ${columns}`,
      [
        newId("agt"),
        request.accountId,
        request.name,
        request.description || null,
        ...keyColumns(keyed),
      ],
    );
    return rows[0];
  };
  const byKey = findByKey(pool, "agents", request.accountId, keyed, (id) =>
    findAgent(pool, request.accountId, id),
  );
  try {
    return (await createOnce(pool, "agents", request.accountId, keyed.key, insert, byKey)).row;
  } catch (error) {
    if (!hasPgCode(error, pgCodes.uniqueViolation)) throw error;
    // A retry racing its first attempt can meet the name before the key: what the key made.
    const agent = await byKey();
    if (agent) return agent;
    throw nameTaken(request.name);
  }
}

async function findAgent(
  db: Queryable,
  accountId: string,
  agentId: string,
): Promise<AgentRow | undefined> {
  const { rows } = await db.query<AgentRow>(
    `SELECT ${columns} FROM call_control.agents WHERE id = $1 AND account_id = $2`,
    [agentId, accountId],
  );
  return rows[0];
}

export async function getAgent(
  pool: Pool,
  request: callcontrol.GetAgentRequest,
): Promise<AgentRow> {
  requireAccount(request.accountId).throwIfAny();
  const agentId = requireId(request.agentId, "agt", "the agent");
  const agent = await findAgent(pool, request.accountId, agentId);
  if (!agent) throw notFound("the agent");
  return agent;
}

export async function listAgents(
  pool: Pool,
  request: callcontrol.ListAgentsRequest,
): Promise<IdPage<AgentRow>> {
  requireAccount(request.accountId).throwIfAny();
  const limit = pageLimit(request.limit);
  const binding = `agents:${request.accountId}`;
  const after = cursorId(request.cursor, binding);
  // Planned for its page each time: a generic plan would filter `id < $2` instead of starting there.
  const { rows } = await pool.query<AgentRow>(
    plannedEachTime(
      `SELECT ${columns} FROM call_control.agents
        WHERE account_id = $1 AND ($2::text IS NULL OR id < $2)
        ORDER BY id DESC LIMIT $3`,
      [request.accountId, after ?? null, limit + 1],
    ),
  );
  return idPage(rows, limit, binding, (row) => row);
}

/** Renaming keeps routes pointing at the agent; calls keep the name they were placed with. */
export async function updateAgent(
  pool: Pool,
  request: callcontrol.UpdateAgentRequest,
): Promise<AgentRow> {
  const errors = requireAccount(request.accountId);
  if (request.name !== undefined) checkAgentName(errors, "#/name", request.name);
  checkDescription(errors, request.description);
  errors.throwIfAny();
  const agentId = requireId(request.agentId, "agt", "the agent");
  try {
    const { rows } = await pool.query<AgentRow>(
      `UPDATE call_control.agents
          SET name = COALESCE($3, name),
              description = CASE WHEN $4::boolean THEN NULLIF($5, '') ELSE description END,
              updated_at = now()
        WHERE id = $1 AND account_id = $2
       RETURNING ${columns}`,
      [
        agentId,
        request.accountId,
        request.name ?? null,
        request.description !== undefined,
        request.description ?? null,
      ],
    );
    if (!rows[0]) throw notFound("the agent");
    return rows[0];
  } catch (error) {
    if (hasPgCode(error, pgCodes.uniqueViolation)) throw nameTaken(request.name ?? "");
    throw error;
  }
}

export async function deleteAgent(
  pool: Pool,
  request: callcontrol.DeleteAgentRequest,
): Promise<void> {
  requireAccount(request.accountId).throwIfAny();
  const agentId = requireId(request.agentId, "agt", "the agent");
  try {
    const { rowCount } = await pool.query(
      "DELETE FROM call_control.agents WHERE id = $1 AND account_id = $2",
      [agentId, request.accountId],
    );
    if (!rowCount) throw notFound("the agent");
  } catch (error) {
    if (isStillReferenced(error)) throw await usedByRoute(pool, "agent_id", agentId, "the agent");
    throw error;
  }
}
