export { migrateUsage, migrationsDir } from "./migrations.js";
export { startUsage, type RunningUsage, type UsageOptions } from "./server.js";
export { createUsageService, type UsageServiceOptions } from "./service.js";
export { startUsageConsumers, type UsageConsumers } from "./consumers.js";
export { IngestBatcher, type IngestStats } from "./ingest-batcher.js";
export {
  canonicalPayload,
  createRecordSigner,
  detachedJws,
  RECORD_SIGNING_PURPOSE,
  type RecordSigner,
} from "./record-signer.js";
export { createUsageKeyStore } from "./signing-keys.js";
export { factContracts, recordKinds, unitOf, type FactKind, type RecordKind } from "./kinds.js";
export type { RecordDraft, SignedRecord, UnsignedRecord } from "./ledger-record.js";
export { usageComponent } from "./component.js";
