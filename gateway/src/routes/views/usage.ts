import { wire, type usage } from "@switchboard/proto";

/**
 * The REST item of a record: every member present, null where it does not apply, so the item
 * minus `signature` is exactly the object whose canonical JSON was signed.
 */
export const toUsageEvent = (r: usage.UsageRecord | undefined) => ({
  id: r?.id ?? "",
  kind: (r && wire.usageKind.spell(r.kind)) ?? "",
  occurred_at: r?.occurredAt ?? "",
  account_id: r?.accountId ?? "",
  principal: r?.principal ?? null,
  request_id: r?.requestId ?? null,
  resource_id: r?.resourceId ?? null,
  method: r?.method ?? null,
  route: r?.route ?? null,
  status: r?.status ?? null,
  replayed: r?.replayed ?? null,
  quantity: r?.quantity ?? 0,
  unit: (r && wire.usageUnit.spell(r.unit)) ?? "",
  attributes: r?.attributes ?? {},
  kid: r?.kid ?? "",
  signature: r?.signature ?? "",
});
