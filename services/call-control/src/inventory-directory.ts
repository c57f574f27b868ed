import { callUnary, createClient, DomainError } from "@switchboard/kit";
import { inventory } from "@switchboard/proto";

/** A number of the account, as call-control needs it (caller ids, route numbers, DIDs). */
export interface OwnedNumber {
  id: string;
  number: string;
  /** The seat the number is assigned to, if any. */
  seatId: string | undefined;
}

/** Asks the inventory which numbers an account owns (call-control reads no other schema). */
export interface NumberDirectory {
  /** The number if it is assigned to the account, else undefined. */
  owned(accountId: string, e164: string): Promise<OwnedNumber | undefined>;
  /** The account a number is assigned to (a DID an inbound call comes to), if any. */
  ownerOf(e164: string): Promise<string | undefined>;
  close(): void;
}

export function connectInventory(address: string, deadlineMs: number): NumberDirectory {
  const client = createClient(inventory.InventoryServiceClient, address);
  return {
    async owned(accountId, e164) {
      try {
        const { number } = await callUnary(
          "inventory",
          client,
          client.getNumber,
          { accountId, numberIdOrE164: e164 },
          { deadlineMs },
        );
        if (!number || number.status !== inventory.NumberStatus.ASSIGNED) return undefined;
        return { id: number.id, number: number.number, seatId: number.seatId };
      } catch (error) {
        if (error instanceof DomainError && error.kind === "not-found") return undefined;
        throw error;
      }
    },
    async ownerOf(e164) {
      const { accountId } = await callUnary(
        "inventory",
        client,
        client.findNumberOwner,
        { number: e164 },
        { deadlineMs },
      );
      return accountId || undefined;
    },
    close: () => client.close(),
  };
}
