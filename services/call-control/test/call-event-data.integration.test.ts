import { createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateCallControl } from "../src/index.js";
import { callEventDataSql } from "../src/calls/call-events.js";
import { callColumns, toPublicCall, type CallRow } from "../src/calls/call-rows.js";

/**
 * A folded step writes its event's data in SQL (callEventDataSql); every other event is written
 * from the row in JavaScript (emitCallEvent: toPublicCall, call_id, attestation). Both must give
 * the same JSON for the same row, in every state, to the millisecond and the billable second.
 */
describe("a call event's data in SQL and in JavaScript (real PostgreSQL)", () => {
  let database: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    database = await createRealTestDatabase("calleventdata");
    pool = createPool(database.url, { max: 2, name: "call-event-data-test" });
    await migrateCallControl(pool);
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const base = {
    direction: "outbound",
    to_number: "+14155550100",
    from_number: "+14155550199",
    timeout_seconds: 30,
    time_limit_seconds: 14400,
    identity: "eyJhbGciOiJFUzI1NiJ9.e30.c2ln",
    attestation: "A",
  };
  const rows: Record<string, unknown>[] = [
    { ...base, status: "queued", created_at: "2026-01-01 00:00:00.123456+00" },
    {
      ...base,
      status: "ringing",
      agent: "alice",
      seat_id: "seat_1",
      seat_claimed: true,
      client_state: 'a "quoted" state $1 \\ ü',
      created_at: "2026-01-01 00:00:00.999999+00",
      ringing_at: "2026-01-01 00:00:01.5+00",
    },
    {
      ...base,
      status: "in_progress",
      early_media: true,
      created_at: "2026-01-01 00:00:00+00",
      answered_at: "2026-01-01 00:00:00.291999+00",
      status_callback: JSON.stringify({ url: "https://example.com/cb", events: ["call.answered"] }),
    },
    // Billable seconds from milliseconds: 2.000 s exactly (micro-seconds beyond do not count).
    {
      ...base,
      status: "completed",
      created_at: "2026-01-01 00:00:00+00",
      answered_at: "2026-01-01 00:00:00.291999+00",
      ended_at: "2026-01-01 00:00:02.291999+00",
      hangup_cause: "normal_clearing",
      hangup_source: "callee",
      sip_code: 200,
    },
    {
      ...base,
      status: "completed",
      created_at: "2026-01-01 00:00:00+00",
      answered_at: "2026-01-01 00:00:00.291001+00",
      ended_at: "2026-01-01 00:00:02.292+00",
      hangup_cause: "time_limit",
      hangup_source: "platform",
      sip_code: 200,
    },
    {
      ...base,
      status: "busy",
      created_at: "2026-01-01 00:00:00.5+00",
      ended_at: "2026-01-01 00:00:01+00",
      hangup_cause: "user_busy",
      hangup_source: "callee",
      sip_code: 486,
    },
    {
      direction: "inbound",
      status: "no_answer",
      to_number: "+14155550100",
      from_number: "anonymous",
      timeout_seconds: 30,
      time_limit_seconds: 60,
      route_id: "rte_1",
      created_at: "2026-01-01 00:00:00+00",
      ended_at: "2026-01-01 00:00:30.0005+00",
      hangup_cause: "timeout",
      hangup_source: "platform",
      sip_code: 487,
    },
  ];

  it.each(rows.map((row, index) => ({ row, index })))(
    "row $index ($row.status): the same JSON",
    async ({ row, index }) => {
      const id = `call_data${index}`;
      const columns = ["id", "account_id", ...Object.keys(row)];
      const values = [id, "acct_data", ...Object.values(row)];
      await pool.query(
        `INSERT INTO call_control.calls (${columns.join(", ")})
         VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})`,
        values,
      );
      const { rows: found } = await pool.query<CallRow & { sql_data: Record<string, unknown> }>(
        `SELECT ${callColumns}, ${callEventDataSql("c")} AS sql_data
           FROM call_control.calls c WHERE c.id = $1`,
        [id],
      );
      const { sql_data: fromSql, ...callRow } = found[0]!;
      const fromJs = {
        ...toPublicCall(callRow),
        call_id: callRow.id,
        attestation: callRow.attestation,
      };
      // Both as the outbox stores them (jsonb), compared value by value.
      expect(fromSql).toEqual(JSON.parse(JSON.stringify(fromJs)));
    },
  );
});
