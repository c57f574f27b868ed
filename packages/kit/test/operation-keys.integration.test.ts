import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, withTransaction, type Pool } from "../src/db.js";
import { DomainError } from "../src/errors.js";
import { createOperationKeysTable, jsonCodec, runOnce } from "../src/operation-keys.js";
import { testDatabaseKinds, type TestDatabase } from "../src/testing.js";

const schema = "once_test";

describe.each(testDatabaseKinds)("runOnce: a keyed state change ($name)", ({ name, create }) => {
  let database: TestDatabase;
  let pool: Pool;
  let runs = 0;

  beforeAll(async () => {
    database = await create("operation_keys");
    pool = createPool(database.url, { max: 4, name: `operation-keys-${name}` });
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query(createOperationKeysTable(schema));
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const change = (key: string | undefined, request: object = { to: "done" }) =>
    withTransaction(pool, (client) =>
      runOnce(
        client,
        { schema, operation: "finish", accountId: "acct_1", key, request, codec: jsonCodec() },
        async () => ({ run: (runs += 1) }),
      ),
    );

  it("runs once per key: the retry gets the first answer, without a key it runs each time", async () => {
    const first = await change("k-1");
    expect(await change("k-1")).toEqual(first);
    const before = runs;
    await change(undefined);
    await change(undefined);
    expect(runs).toBe(before + 2);
  });

  it("another request under the key is idempotency-mismatch", async () => {
    await change("k-2");
    await expect(change("k-2", { to: "elsewhere" })).rejects.toSatisfy(
      (error) => error instanceof DomainError && error.kind === "idempotency-mismatch",
    );
  });

  it("a key past 24 hours runs again, and old keys are purged by later writes", async () => {
    const first = await change("k-3");
    await pool.query(
      `UPDATE ${schema}.operation_keys SET created_at = now() - interval '25 hours'
        WHERE idempotency_key IN ('k-1', 'k-2', 'k-3')`,
    );
    const again = await change("k-3");
    expect(again).not.toEqual(first);
    await change("k-4");
    const { rows } = await pool.query<{ idempotency_key: string }>(
      `SELECT idempotency_key FROM ${schema}.operation_keys ORDER BY idempotency_key`,
    );
    expect(rows.map((r) => r.idempotency_key)).toEqual(["k-3", "k-4"]);
  });
});
