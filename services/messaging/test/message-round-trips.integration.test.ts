import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTemplate,
  eventsOf,
  ownNumber,
  sandboxNumber,
  sendWithConsent,
} from "@switchboard/test-support/fixtures/messages";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";

/**
 * Issue 31: a message's statements, as `npm run bench:messages` counts them per message under
 * load (every statement of the platform's pg clients). Here the parts that are the message's
 * own, exactly: the send is two round trips (its BEGIN with the checks' read, its COMMIT with
 * the insert of the message and its first event), and no event of the message's life is a
 * statement of its own — each is appended in the statement of the move it describes
 * (messages/transitions.ts). Before: the send four (BEGIN, read, insert, COMMIT), and each of
 * `sending`, `sent` and `delivered` a move and then an append.
 */
describe("a message's round trips (PostgreSQL + Redis)", () => {
  let p: MessagingPlatform;
  let token: string;
  let sender: string;
  let template: { id: string };
  const proto = pg.Client.prototype as unknown as {
    query: (this: pg.Client, ...args: unknown[]) => unknown;
  };
  const original = proto.query;
  const sent: { text: string; values: unknown[] }[] = [];
  /** The statements prepared on any connection (kit simpleStatement), by name. */
  const prepared = new Map<string, string>();
  /** A statement as sent, its EXECUTEs of prepared statements shown with their statements. */
  const spelledOut = (text: string) =>
    text
      .replace(/PREPARE \w+ AS [\s\S]*?;\nEXECUTE/g, "EXECUTE")
      .replace(/EXECUTE (\w+)/g, (_, name: string) => `${prepared.get(name) ?? name} EXECUTE`)
      .replace(/\s+/g, " ")
      .trim();

  /** One message from the sender to the sandbox's first number, under the template. */
  const sendOne = () =>
    sendWithConsent(p, token, { to: sandboxNumber(0), from: sender, templateId: template.id });
  /** The message's event types, once it was delivered (or after 10 s). */
  const typesOnceDelivered = async (id: string) => {
    let types: string[] = [];
    for (let i = 0; i < 400 && !types.includes("message.delivered"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      types = (await eventsOf(p, id)).map((e) => e.type);
    }
    return types;
  };

  beforeAll(async () => {
    p = await startMessagingPlatform();
    token = await p.token();
    sender = await ownNumber(p, token, ["sms"]);
    template = await createTemplate(p, token, "Order {{n}} shipped");
    proto.query = function query(this: pg.Client, ...args: unknown[]) {
      const [first, values] = args;
      const config = typeof first === "string" ? { text: first } : (first as pg.QueryConfig);
      const text = config?.text ?? "";
      for (const [, name, statement] of text.matchAll(/PREPARE (\w+) AS ([\s\S]*?);\nEXECUTE/g)) {
        prepared.set(name!, statement!);
      }
      sent.push({ text, values: Array.isArray(values) ? values : (config?.values ?? []) });
      return original.apply(this, args);
    };
  });
  afterAll(async () => {
    proto.query = original;
    await p?.stop();
  });

  it("sends in two round trips and appends each event in the statement of its move", async () => {
    // The template's signature is verified once per process (its first send reads it twice).
    await sendOne();
    sent.length = 0;
    const { id } = await sendOne();
    const types = await typesOnceDelivered(id);
    expect(types).toEqual([
      "message.queued",
      "message.sending",
      "message.sent",
      "message.delivered",
    ]);
    const oneLine = sent.map((s) => spelledOut(s.text));
    // The send: the checks' read goes with the BEGIN, the insert with the COMMIT (each from the
    // connection's prepared statement once the first send prepared it).
    const reads = oneLine.filter((t) => /FROM messaging\.templates/.test(t));
    expect(reads, reads.join("\n")).toHaveLength(1);
    expect(reads[0]).toMatch(/^BEGIN; SELECT/);
    const inserts = oneLine.filter((t) => /INSERT INTO messaging\.messages AS m/.test(t));
    expect(inserts.filter((t) => t.includes(id))).toHaveLength(1);
    expect(inserts.find((t) => t.includes(id))).toMatch(/; COMMIT$/);
    // Both run as EXECUTE of the connection's prepared statement (kit simpleStatement).
    expect(reads[0]).toContain(" EXECUTE(");
    expect(inserts.find((t) => t.includes(id))).toContain(" EXECUTE(");
    // Every move carries its event: no statement appends an event of the message on its own
    // (appendEvent's statement, whose $3 is the resource).
    const appendsAlone = sent.filter(
      (s) =>
        /^\s*WITH next AS \(\s*INSERT INTO "?messaging"?\.outbox_sequences/.test(s.text) &&
        s.values[2] === id,
    );
    expect(appendsAlone.map((s) => s.values[1])).toEqual([]);
    // A move may travel after what its group commit held back (BEGIN, a savepoint).
    const moves = oneLine.filter((t) =>
      /^(BEGIN; |RELEASE SAVEPOINT batched; SAVEPOINT batched; )?WITH moved AS \( UPDATE messaging\.messages/.test(
        t,
      ),
    );
    expect(moves.length).toBeGreaterThanOrEqual(3);
  });

  it("sends no statement of its own for a delivery's BEGIN, savepoints or try records", async () => {
    sent.length = 0;
    const { id } = await sendOne();
    const types = await typesOnceDelivered(id);
    expect(types).toContain("message.delivered");
    const own = sent
      .filter((s) => s.text.includes(id) || s.values.includes(id))
      .map((s) => spelledOut(s.text));
    // The claim's read goes with the group commit's BEGIN (and its savepoint, in a batch).
    const claims = own.filter((t) => /FOR UPDATE OF m/.test(t));
    expect(claims.length, own.join("\n")).toBeGreaterThanOrEqual(1);
    for (const claim of claims) expect(claim).toMatch(/^BEGIN;/);
    // The try's row is written in the move to sending, its end in the move to sent.
    const alone = own.filter((t) => /^(INSERT INTO|UPDATE) messaging\.send_attempts/.test(t));
    expect(alone, own.join("\n")).toEqual([]);
    const sending = own.find((t) => t.includes("INSERT INTO messaging.send_attempts"));
    expect(sending).toMatch(/WITH moved AS \( UPDATE messaging\.messages/);
    const finished = own.find((t) => t.includes("UPDATE messaging.send_attempts"));
    expect(finished).toMatch(/WITH moved AS \( UPDATE messaging\.messages/);
  });

  it("claims a new message once: the dispatcher's claim is its first, and books its turn", async () => {
    sent.length = 0;
    const { id } = await sendOne();
    expect(await typesOnceDelivered(id)).toContain("message.delivered");
    const own = sent
      .filter((s) => s.text.includes(id) || s.values.includes(id))
      .map((s) => spelledOut(s.text));
    const claims = own.filter((t) => /FOR UPDATE OF m/.test(t));
    // Before: a claim in the delivery's batches found the turn not booked, and a second one in
    // the bookings' batch booked it.
    expect(claims, own.join("\n")).toHaveLength(1);
    const bookings = own.filter((t) => /INSERT INTO messaging\.sender_submits/.test(t));
    expect(bookings, own.join("\n")).toHaveLength(1);
  });

  it("moves a message on its receipt in one statement", async () => {
    sent.length = 0;
    const { id } = await sendOne();
    expect(await typesOnceDelivered(id)).toContain("message.delivered");
    const { rows } = await p.pool.query<{ provider_message_id: string }>(
      "SELECT provider_message_id FROM messaging.messages WHERE id = $1",
      [id],
    );
    const providerId = rows[0]!.provider_message_id;
    const naming = sent
      .filter((s) => s.text.includes(providerId) || s.values.includes(providerId))
      .map((s) => spelledOut(s.text))
      .filter((t) => !/INSERT INTO messaging\.sandbox_network/.test(t));
    // The move to sent records the provider id; the receipt's move names the message by it.
    // Before: the receipt looked the message up and locked it, then moved it by its id.
    const lookups = naming.filter((t) =>
      /SELECT id FROM messaging\.messages WHERE provider/.test(t),
    );
    expect(lookups, naming.join("\n")).toEqual([]);
    const receiptMoves = naming.filter((t) => /WHERE m\.provider_message_id = /.test(t));
    expect(receiptMoves, naming.join("\n")).toHaveLength(1);
    expect(receiptMoves[0]).toMatch(/^(.*; )?WITH moved AS \( UPDATE messaging\.messages/);
  });
});
