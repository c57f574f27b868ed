import { DomainError, newId, type Queryable } from "@switchboard/kit";
import { Checks, accountIdPattern, checkName, isUniqueViolation } from "./validation.js";

export interface Account {
  id: string;
  name: string;
  createdAt: Date;
}

interface AccountRow {
  id: string;
  name: string;
  created_at: Date;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
});

/** Creates an account; `id` defaults to a new `acct_<ulid>`. An existing id is a conflict. */
export async function createAccount(
  db: Queryable,
  input: { id?: string | undefined; name: string },
): Promise<Account> {
  const checks = new Checks();
  if (input.id !== undefined) {
    checks.check(
      accountIdPattern.test(input.id),
      "#/id",
      "must be acct_ followed by 1 to 64 of a-z 0-9 _ -",
    );
  }
  checkName(checks, input.name, "#/name", 1);
  checks.done();
  const id = input.id ?? newId("acct");
  try {
    const { rows } = await db.query<AccountRow>(
      "INSERT INTO gateway.accounts (id, name) VALUES ($1, $2) RETURNING id, name, created_at",
      [id, input.name],
    );
    return toAccount(rows[0] as AccountRow);
  } catch (error) {
    if (isUniqueViolation(error)) throw new DomainError("conflict", `account ${id} already exists`);
    throw error;
  }
}

export async function listAccounts(db: Queryable): Promise<Account[]> {
  const { rows } = await db.query<AccountRow>(
    "SELECT id, name, created_at FROM gateway.accounts ORDER BY created_at, id",
  );
  return rows.map(toAccount);
}

/** Throws 404 `not-found` unless the account exists. */
export async function requireAccount(db: Queryable, accountId: string): Promise<void> {
  const { rows } = await db.query("SELECT 1 FROM gateway.accounts WHERE id = $1", [accountId]);
  if (rows.length === 0) throw new DomainError("not-found", `account ${accountId} was not found`);
}

export async function getAccount(db: Queryable, accountId: string): Promise<Account> {
  const { rows } = await db.query<AccountRow>(
    "SELECT id, name, created_at FROM gateway.accounts WHERE id = $1",
    [accountId],
  );
  if (!rows[0]) throw new DomainError("not-found", `account ${accountId} was not found`);
  return toAccount(rows[0]);
}
