import type { Client } from "@grpc/grpc-js";
import type { RpcMethod, SmokeBackend } from "./ports.js";
import type { StepScope } from "./step-scope.js";

/** Pages a smoke looks through for its marked resources before it creates new ones. */
const maxPages = 25;

export const pageSize = 200;

/**
 * The first item of an account's listing that `match` accepts, walking at most 25 pages of 200
 * (newest first in every listing the smoke walks, so the most recent marked resource wins).
 */
export async function findListed<
  C extends Client,
  Req extends { cursor: string },
  Res extends { nextCursor: string },
  T,
>(
  scope: StepScope,
  listing: {
    backend: SmokeBackend<C>;
    method: RpcMethod<C, Req, Res>;
    request: Omit<Req, "cursor" | "limit">;
    items: (response: Res) => readonly T[];
  },
  match: (item: T) => boolean,
): Promise<T | undefined> {
  let cursor = "";
  for (let page = 0; page < maxPages; page++) {
    const request = { ...listing.request, limit: pageSize, cursor } as unknown as Req;
    const response = await scope.rpc(listing.backend, listing.method, request);
    const found = listing.items(response).find(match);
    if (found !== undefined) return found;
    if (response.nextCursor === "") return undefined;
    cursor = response.nextCursor;
  }
  return undefined;
}
