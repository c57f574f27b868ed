import { compactVerify, exportJWK, flattenedVerify, generateKeyPair, importJWK } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { newId, type SigningKeyStore } from "@switchboard/kit";
import { canonicalPayload, createRecordSigner, type RecordSigner } from "../src/record-signer.js";
import type { RecordDraft, UnsignedRecord } from "../src/ledger-record.js";

const draft = (overrides: Partial<RecordDraft> = {}): RecordDraft => ({
  kind: "api.request",
  occurred_at: "2026-11-21T07:17:20.123Z",
  account_id: "acct_test",
  principal: "cli_test",
  request_id: newId("req"),
  resource_id: null,
  method: "POST",
  route: "/api/numbers/hold",
  status: 201,
  replayed: false,
  quantity: 1,
  unit: "request",
  attributes: { latency_ms: 3.25 },
  eventId: null,
  ...overrides,
});

async function signerWithKey(threads = 1) {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", {
    crv: "Ed25519",
    extractable: true,
  });
  const kid = newId("key");
  const keys = {
    activeKey: async () => ({ kid, purpose: "usage-record", alg: "EdDSA" as const, privateKey }),
  } as unknown as SigningKeyStore;
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "EdDSA" };
  const signer = createRecordSigner(keys, { threads });
  signers.push(signer);
  return { signer, kid, verifyKey: await importJWK(jwk, "EdDSA") };
}

/** The record a client sees (payload + signature) verified the way docs/api.md tells clients to. */
async function verifies(
  record: UnsignedRecord,
  signature: string,
  key: Parameters<typeof flattenedVerify>[1],
) {
  const [protectedHeader, empty, sig] = signature.split(".");
  expect(empty).toBe("");
  try {
    await flattenedVerify(
      {
        protected: protectedHeader!,
        payload: Buffer.from(canonicalPayload(record)).toString("base64url"),
        signature: sig!,
      },
      key,
      { algorithms: ["EdDSA"] },
    );
    return true;
  } catch {
    return false;
  }
}

const signers: RecordSigner[] = [];
afterAll(() => Promise.all(signers.map((s) => s.close())));

describe("record signatures", () => {
  it("signs the canonical JSON of the record without signature, as a detached compact JWS", async () => {
    const { signer, kid, verifyKey } = await signerWithKey();
    const [row] = await signer.signRecords([draft()]);
    const record = JSON.parse(row!.payload) as UnsignedRecord;
    expect(record.kid).toBe(kid);
    expect(record.id).toMatch(/^use_[0-9a-z]{26}$/);
    expect(row!.payload).toBe(canonicalPayload(record));
    expect(row!.signature).toMatch(/^[\w-]+\.\.[\w-]+$/);
    const header = JSON.parse(Buffer.from(row!.signature.split(".")[0]!, "base64url").toString());
    expect(header).toEqual({ alg: "EdDSA", kid });
    expect(await verifies(record, row!.signature, verifyKey)).toBe(true);

    // The compact form with the payload re-attached verifies too.
    const [h, , s] = row!.signature.split(".");
    const attached = `${h}.${Buffer.from(row!.payload).toString("base64url")}.${s}`;
    const { payload } = await compactVerify(attached, verifyKey);
    expect(new TextDecoder().decode(payload)).toBe(row!.payload);
  });

  it("breaks on a change to any field", async () => {
    const { signer, verifyKey } = await signerWithKey();
    const [row] = await signer.signRecords([
      draft({ resource_id: "hld_01jd0000000000000000000000" }),
    ]);
    const record = JSON.parse(row!.payload) as UnsignedRecord;
    const changes: Partial<UnsignedRecord>[] = [
      { id: newId("use") },
      { kind: "call.completed" },
      { occurred_at: "2026-11-21T07:17:20.124Z" },
      { account_id: "acct_other" },
      { principal: null },
      { request_id: newId("req") },
      { resource_id: null },
      { method: "GET" },
      { route: "/api/numbers" },
      { status: 200 },
      { replayed: true },
      { quantity: 2 },
      { unit: "second" },
      { attributes: { latency_ms: 3.26 } },
      { kid: newId("key") },
    ];
    expect(changes).toHaveLength(Object.keys(record).length);
    for (const change of changes) {
      expect(await verifies({ ...record, ...change }, row!.signature, verifyKey)).toBe(false);
    }
    expect(await verifies({ ...record }, row!.signature, verifyKey)).toBe(true);
  });

  it("canonicalises per RFC 8785: key order and number form do not matter", () => {
    const a = canonicalPayload({ ...(JSON.parse('{"b":1,"a":2}') as object) } as UnsignedRecord);
    const b = canonicalPayload({ a: 2.0, b: 1 } as unknown as UnsignedRecord);
    expect(a).toBe('{"a":2,"b":1}');
    expect(b).toBe(a);
  });

  it.each([0, 1, 3])(
    "signs a batch with one key, each record its own id, on %i signing thread(s)",
    async (threads) => {
      const { signer, kid, verifyKey } = await signerWithKey(threads);
      const rows = await signer.signRecords(Array.from({ length: 150 }, () => draft()));
      expect(new Set(rows.map((r) => r.id)).size).toBe(150);
      expect(new Set(rows.map((r) => r.kid))).toEqual(new Set([kid]));
      for (const row of rows) {
        const record = JSON.parse(row.payload) as UnsignedRecord;
        expect(row.requestId).toBe(record.request_id);
        expect(await verifies(record, row.signature, verifyKey)).toBe(true);
      }
    },
  );
});
