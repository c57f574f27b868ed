import { createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateMessaging } from "../src/index.js";
import {
  messageColumns,
  messageEventData,
  messageEventDataSql,
  type MessageRow,
} from "../src/messages/rows.js";

/**
 * A transition writes its event's data in SQL (messageEventDataSql, in the statement of the
 * move); a message's first event is written from the row in JavaScript (messageEventData). Both
 * must give the same JSON for the same row.
 */
describe("a message event's data in SQL and in JavaScript (real PostgreSQL)", () => {
  let database: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    database = await createRealTestDatabase("messageeventdata");
    pool = createPool(database.url, { max: 2, name: "message-event-data-test" });
    await migrateMessaging(pool);
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const base = {
    direction: "outbound",
    channel: "sms",
    to_number: "+14155550100",
    from_number: "+14155550199",
    body: "Order 7 shipped",
    encoding: "GSM-7",
    segments: 1,
    created_at: "2026-01-01 00:00:00.123999+00",
    updated_at: "2026-01-01 00:00:01.000001+00",
  };
  const rows: Record<string, unknown>[] = [
    { ...base, status: "queued", template_id: "tpl_1", template_version: 3, consent_id: "cns_1" },
    { ...base, status: "sending", channel_used: "sms", attempts: 1 },
    {
      ...base,
      status: "sent",
      channel: "rcs",
      channel_used: "sms",
      fallback: "sms",
      fallback_applied: true,
      segments: 3,
      encoding: "UCS-2",
      media_urls: ["https://example.com/a.png", "https://example.com/b.png"],
      status_callback: JSON.stringify({ url: "https://example.com/cb", events: [] }),
    },
    { ...base, status: "delivered", channel_used: "sms" },
    {
      ...base,
      status: "failed",
      error_code: "carrier-rejected",
      error_message: 'the "carrier" said no',
    },
    {
      ...base,
      direction: "inbound",
      status: "received",
      channel_used: "sms",
      body: "STOP please $1",
      keyword: "STOP",
      in_reply_to: "msg_earlier",
    },
  ];

  it.each(rows.map((row, index) => ({ row, index })))(
    "row $index ($row.status): the same JSON",
    async ({ row, index }) => {
      const id = `msg_data${index}`;
      const columns = ["id", "account_id", ...Object.keys(row)];
      const values = [id, "acct_data", ...Object.values(row)];
      await pool.query(
        `INSERT INTO messaging.messages (${columns.join(", ")})
         VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})`,
        values,
      );
      const { rows: found } = await pool.query<MessageRow & { sql_data: Record<string, unknown> }>(
        `SELECT ${messageColumns}, ${messageEventDataSql("m")} AS sql_data
           FROM messaging.messages m WHERE m.id = $1`,
        [id],
      );
      const { sql_data: fromSql, ...messageRow } = found[0]!;
      expect(fromSql).toEqual(JSON.parse(JSON.stringify(messageEventData(messageRow))));
    },
  );
});
