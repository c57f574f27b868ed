import { unary, type GrpcService, type Logger, type Pool } from "@switchboard/kit";
import { inventory } from "@switchboard/proto";
import { assignHold, createHold, defaultHoldLimit, getHold, releaseHold } from "./holds.js";
import { findNumberOwner, getNumber, listNumbers, releaseNumber } from "./numbers.js";
import type { NumberOwnerWatch } from "./number-owner-watch.js";
import { searchNumbers } from "./search.js";

export interface InventoryServiceOptions {
  pool: Pool;
  logger: Logger;
  /** Serves WatchNumberOwners. */
  watch: NumberOwnerWatch;
  /** Active holds allowed per account (default 50). */
  holdLimit?: number;
}

/** The InventoryService gRPC handlers: each a thin adapter over one operation module. */
export function createInventoryService(options: InventoryServiceOptions): GrpcService {
  const { pool, logger } = options;
  const holdLimit = options.holdLimit ?? defaultHoldLimit;
  const implementation: inventory.InventoryServiceServer = {
    searchNumbers: unary(logger, (request: inventory.SearchNumbersRequest) =>
      searchNumbers(pool, request),
    ),
    createHold: unary(
      logger,
      async (
        request: inventory.CreateHoldRequest,
        context,
      ): Promise<inventory.CreateHoldResponse> => ({
        hold: await createHold(pool, request, {
          holdLimit,
          idempotencyKey: context.idempotencyKey,
        }),
      }),
    ),
    getHold: unary(logger, async (request: inventory.GetHoldRequest) => ({
      hold: await getHold(pool, request),
    })),
    releaseHold: unary(logger, async (request: inventory.ReleaseHoldRequest, context) => ({
      hold: await releaseHold(pool, request, context.idempotencyKey),
    })),
    assignHold: unary(logger, (request: inventory.AssignHoldRequest, context) =>
      assignHold(pool, request, context.idempotencyKey),
    ),
    listNumbers: unary(logger, (request: inventory.ListNumbersRequest) =>
      listNumbers(pool, request),
    ),
    getNumber: unary(logger, async (request: inventory.GetNumberRequest) => ({
      number: await getNumber(pool, request),
    })),
    releaseNumber: unary(logger, async (request: inventory.ReleaseNumberRequest, context) => ({
      number: await releaseNumber(pool, request, context.idempotencyKey),
    })),
    findNumberOwner: unary(logger, (request: inventory.FindNumberOwnerRequest) =>
      findNumberOwner(pool, request),
    ),
    watchNumberOwners: (call) => options.watch.handle(call),
  };
  return { definition: inventory.InventoryServiceService, implementation };
}
