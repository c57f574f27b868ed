import {
  DomainError,
  unary,
  type GrpcService,
  type Logger,
  type Pool,
  type SigningKeyStore,
} from "@switchboard/kit";
import { usage } from "@switchboard/proto";
import type { IngestBatcher } from "./ingest-batcher.js";
import { getUsageEvent, listUsageEvents } from "./listing.js";
import { requestDrafts } from "./request-records.js";
import { publicKeys, rotatePublicKey } from "./signing-keys.js";

export interface UsageServiceOptions {
  pool: Pool;
  keys: SigningKeyStore;
  /** The ledger's group commit, shared with the business facts. */
  batcher: IngestBatcher;
  logger: Logger;
}

/** The component whose record outbox relays api.request records (its internal credential's principal). */
const RECORD_RELAY_PRINCIPAL = "gateway";

/** The UsageService gRPC handlers: each a thin adapter over one operation module. */
export function createUsageService(options: UsageServiceOptions): GrpcService {
  const { pool, keys, batcher, logger } = options;
  const implementation: usage.UsageServiceServer = {
    listUsageEvents: unary(logger, (request: usage.ListUsageEventsRequest) =>
      listUsageEvents(pool, request),
    ),
    getUsageEvent: unary(logger, async (request: usage.GetUsageEventRequest) => ({
      record: await getUsageEvent(pool, request),
    })),
    listSigningKeys: unary(logger, async () => ({ keys: await publicKeys(keys) })),
    rotateSigningKey: unary(logger, async () => ({ key: await rotatePublicKey(keys) })),
    appendRequestRecords: unary(
      logger,
      async (request: usage.AppendRequestRecordsRequest, { credential }) => {
        if (credential.principal !== RECORD_RELAY_PRINCIPAL || credential.accountId !== "") {
          throw new DomainError("insufficient-scope", "only the gateway's relay appends records");
        }
        return { inserted: await batcher.submit(requestDrafts(request.records, logger)) };
      },
    ),
  };
  return { definition: usage.UsageServiceService, implementation };
}
