import { z } from "zod";
import { dateTimeParam } from "./common.js";

/**
 * The creation window and order of the calls, messages and webhook-deliveries listings
 * (docs/api.md "Pagination"): `created_after`, `created_before` and `sort`.
 */
export const createdSorts = ["-created_at", "created_at"] as const;

export const createdWindowQuery = {
  created_after: dateTimeParam(
    "RFC 3339: only those created after this time (exclusive).",
    "2026-11-24T00:00:00Z",
  ),
  created_before: dateTimeParam(
    "RFC 3339: only those created before this time (exclusive); must be later than created_after.",
    "2026-11-25T00:00:00Z",
  ),
  sort: z
    .enum(createdSorts)
    .default("-created_at")
    .describe(
      "-created_at: newest first (the default); created_at: oldest first. Ties on created_at go by id.",
    ),
};

/** The listing RPCs' fields for a parsed window and order. */
export const createdWindowRpc = (query: {
  created_after?: string | undefined;
  created_before?: string | undefined;
  sort: (typeof createdSorts)[number];
}) => ({
  createdAfter: query.created_after,
  createdBefore: query.created_before,
  oldestFirst: query.sort === "created_at",
});
