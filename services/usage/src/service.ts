import {
  unary,
  type GrpcService,
  type Logger,
  type Pool,
  type SigningKeyStore,
} from "@switchboard/kit";
import { usage } from "@switchboard/proto";
import { getUsageEvent, listUsageEvents } from "./listing.js";
import { publicKeys, rotatePublicKey } from "./signing-keys.js";

export interface UsageServiceOptions {
  pool: Pool;
  keys: SigningKeyStore;
  logger: Logger;
}

/** The UsageService gRPC handlers: each a thin adapter over one operation module. */
export function createUsageService(options: UsageServiceOptions): GrpcService {
  const { pool, keys, logger } = options;
  const implementation: usage.UsageServiceServer = {
    listUsageEvents: unary(logger, (request: usage.ListUsageEventsRequest) =>
      listUsageEvents(pool, request),
    ),
    getUsageEvent: unary(logger, async (request: usage.GetUsageEventRequest) => ({
      record: await getUsageEvent(pool, request),
    })),
    listSigningKeys: unary(logger, async () => ({ keys: await publicKeys(keys) })),
    rotateSigningKey: unary(logger, async () => ({ key: await rotatePublicKey(keys) })),
  };
  return { definition: usage.UsageServiceService, implementation };
}
