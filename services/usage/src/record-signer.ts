import { KeyObject } from "node:crypto";
import { availableParallelism } from "node:os";
import canonicalize from "canonicalize";
import { newId, type SigningKeyStore } from "@switchboard/kit";
import type { LedgerRow, RecordDraft, UnsignedRecord } from "./ledger-record.js";
import { createSignaturePool, signDetached } from "./signature-pool.js";

/** The purpose of the keys in usage.signing_keys that sign records. */
export const RECORD_SIGNING_PURPOSE = "usage-record";

/** The RFC 8785 canonical JSON of a record without `signature`: the signed payload. */
export function canonicalPayload(record: UnsignedRecord): string {
  const text = canonicalize(record);
  if (text === undefined) throw new TypeError("a usage record must serialise to JSON");
  return text;
}

/**
 * A compact JWS with detached payload (RFC 7515 appendix F): `<header>..<signature>`, the
 * signing input being `<header>.<base64url(payload)>` as usual (b64 stays true).
 */
export const detachedJws = signDetached;

export interface RecordSigner {
  /**
   * Gives each draft its id and the active key's kid, canonicalises it and signs it: one key
   * look-up per call (cached by the store), the signatures computed on the signing threads.
   */
  signRecords(drafts: readonly RecordDraft[]): Promise<LedgerRow[]>;
  close(): Promise<void>;
}

/**
 * One signing thread per spare core, at least one, at most four: what a usage process with cores
 * of its own may set USAGE_SIGNING_THREADS to (the usage benchmark's threaded row). The default
 * signs in line: a thread adds a copy of each batch and a wake-up per batch, and with one the
 * mesh floor cost 6–12 % more CPU per request (three alternating pairs of bench:floor runs).
 */
export const spareCoreSigningThreads = (): number =>
  Math.max(1, Math.min(4, availableParallelism() - 1));

interface PreparedKey {
  encodedHeader: string;
  key: KeyObject;
}

export function createRecordSigner(
  keys: SigningKeyStore,
  options: { threads?: number } = {},
): RecordSigner {
  const prepared = new Map<string, PreparedKey>();
  const pool = createSignaturePool(options.threads ?? 0);

  const prepare = async (): Promise<{ kid: string } & PreparedKey> => {
    const active = await keys.activeKey(RECORD_SIGNING_PURPOSE);
    if (active.alg !== "EdDSA") {
      throw new Error(
        `usage records are signed with EdDSA, but key ${active.kid} is ${active.alg}`,
      );
    }
    let entry = prepared.get(active.kid);
    if (!entry) {
      const header = JSON.stringify({ alg: "EdDSA", kid: active.kid });
      entry = {
        encodedHeader: Buffer.from(header, "utf8").toString("base64url"),
        key: KeyObject.from(active.privateKey),
      };
      prepared.set(active.kid, entry);
    }
    return { kid: active.kid, ...entry };
  };

  return {
    async signRecords(drafts) {
      if (drafts.length === 0) return [];
      const { kid, encodedHeader, key } = await prepare();
      const records = drafts.map((draft) => {
        const { eventId, ...fields } = draft;
        const record: UnsignedRecord = { ...fields, id: newId("use"), kid };
        return { record, eventId, payload: canonicalPayload(record) };
      });
      const signatures = await pool.sign(
        key,
        encodedHeader,
        records.map((r) => r.payload),
      );
      return records.map(({ record, eventId, payload }, i): LedgerRow => ({
        id: record.id,
        kind: record.kind,
        occurredAt: record.occurred_at,
        accountId: record.account_id,
        requestId: record.request_id,
        eventId,
        resourceId: record.resource_id,
        kid,
        payload,
        signature: signatures[i]!,
      }));
    },
    close: () => pool.close(),
  };
}
