import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, newId } from "@switchboard/kit";
import { testDatabaseKinds } from "@switchboard/kit/testing";
import { factDraft } from "../src/fact-records.js";
import { IngestBatcher } from "../src/ingest-batcher.js";
import type { RecordDraft } from "../src/ledger-record.js";
import { createRecordSigner, type RecordSigner } from "../src/record-signer.js";
import { requestDraft } from "../src/request-records.js";
import { createUsageKeyStore } from "../src/signing-keys.js";
import { requestRecord, signingSecret, startUsageHarness, type UsageHarness } from "./harness.js";

const postgres = testDatabaseKinds[0];
const logger = createLogger("usage-batcher-test", { level: "silent" });

const fact = (): RecordDraft =>
  factDraft({
    id: newId("evt"),
    type: "call.placed",
    timestamp: new Date().toISOString(),
    account_id: "acct_linger",
    resource_id: newId("call"),
    sequence: 1,
    data: { call_id: "c", direction: "outbound" },
  })!;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the ledger's group commit with lingering facts (postgres)", () => {
  let h: UsageHarness;
  let signer: RecordSigner;
  const batcherWith = (
    options: { maxBatch?: number; lingerLimit?: number; lingerMs?: number } = {},
  ) => new IngestBatcher({ pool: h.pool, signer, logger, ...options });

  beforeAll(async () => {
    h = await startUsageHarness(postgres);
    const keys = createUsageKeyStore({ pool: h.pool, secret: signingSecret });
    await keys.init();
    signer = createRecordSigner(keys);
  });
  afterAll(async () => {
    await signer?.close();
    await h?.stop();
  });

  it("holds lingering facts back, and a request record takes them with it in one INSERT", async () => {
    const batcher = batcherWith({ lingerMs: 60_000 });
    let written = 0;
    const first = batcher.submit([fact()], { linger: true }).then((n) => (written += n));
    await pause(100);
    const second = batcher.submit([fact()], { linger: true }).then((n) => (written += n));
    await pause(100);
    expect(batcher.stats.batches).toBe(0);
    expect(written).toBe(0);
    const record = requestDraft(requestRecord({ accountId: "acct_linger" }));
    expect(await batcher.submit([record])).toBe(1);
    await Promise.all([first, second]);
    expect(written).toBe(2);
    expect(batcher.stats).toMatchObject({ batches: 1, records: 3, inserted: 3 });
  });

  it("writes a lingering fact by its deadline when nothing else comes", async () => {
    const batcher = batcherWith({ lingerMs: 30 });
    const draft = fact();
    expect(await batcher.submit([draft], { linger: true })).toBe(1);
    expect(batcher.stats).toMatchObject({ batches: 1, records: 1 });
    expect(await h.count("event_id = $1", [draft.eventId])).toBe(1);
  });

  it("writes lingering facts at once when they fill a batch", async () => {
    const batcher = batcherWith({ maxBatch: 3, lingerMs: 60_000 });
    const written = await Promise.all(
      [fact(), fact(), fact()].map((draft) => batcher.submit([draft], { linger: true })),
    );
    expect(written).toEqual([1, 1, 1]);
    expect(batcher.stats).toMatchObject({ batches: 1, records: 3 });
    await batcher.drained();
  });

  it("writes lingering facts at once when every job that could add one is waiting", async () => {
    const batcher = batcherWith({ lingerLimit: 2, lingerMs: 60_000 });
    const written = await Promise.all(
      [fact(), fact()].map((draft) => batcher.submit([draft], { linger: true })),
    );
    expect(written).toEqual([1, 1]);
    expect(batcher.stats).toMatchObject({ batches: 1, records: 2 });
  });
});
