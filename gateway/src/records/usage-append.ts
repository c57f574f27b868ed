import { callUnary } from "@switchboard/kit";
import type { usage } from "@switchboard/proto";
import type { Backend } from "../backends.js";

/**
 * The record relay's hand-off: AppendRequestRecords on the usage service, as the gateway
 * itself (no account), resolved once the ledger has committed the batch.
 */
export function appendRecordsTo(
  backend: Backend<usage.UsageServiceClient>,
  deadlineMs: number,
): (records: usage.RequestRecord[]) => Promise<void> {
  return async (records) => {
    await callUnary<usage.AppendRequestRecordsRequest, usage.AppendRequestRecordsResponse>(
      backend.name,
      backend.client,
      backend.client.appendRequestRecords,
      { records },
      { deadlineMs, actingFor: { accountId: undefined, principal: "gateway" } },
    );
  };
}
