import { inventory, wire } from "@switchboard/proto";

/** inventory's messages as the REST API shows them (snake_case, null for unset). */
export const toNumber = (n: inventory.PhoneNumber | undefined) => ({
  id: n?.id ?? "",
  number: n?.number ?? "",
  country: n?.country ?? "",
  region: n?.region ?? "",
  locality: n?.locality ?? "",
  area_code: n?.areaCode ?? "",
  type: (n && wire.numberType.spell(n.type)) ?? "",
  capabilities: (n?.capabilities ?? []).map((c) => wire.capability.spell(c) ?? ""),
  status: (n && wire.numberStatus.spell(n.status)) ?? "",
  ...(n?.status === inventory.NumberStatus.ASSIGNED
    ? { seat_id: n.seatId ?? null, assigned_at: n.assignedAt ?? null }
    : {}),
});

export const toHold = (h: inventory.Hold | undefined) => ({
  id: h?.id ?? "",
  number_id: h?.numberId ?? "",
  number: h?.number ?? "",
  status: (h && wire.holdStatus.spell(h.status)) ?? "",
  expires_at: h?.expiresAt ?? "",
  created_at: h?.createdAt ?? "",
  released_at: h?.releasedAt ?? null,
  converted_at: h?.convertedAt ?? null,
});
