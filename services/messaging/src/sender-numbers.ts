import {
  callUnary,
  createClient,
  createTtlCache,
  DomainError,
  type TtlCache,
} from "@switchboard/kit";
import { inventory, wire } from "@switchboard/proto";

export interface SenderNumber {
  id: string;
  number: string;
  /** As the API spells them (sms, mms…). */
  capabilities: wire.CapabilityValue[];
}

const toSenderNumber = (number: inventory.PhoneNumber): SenderNumber => ({
  id: number.id,
  number: number.number,
  capabilities: number.capabilities.map(wire.capability.spell).filter((c) => c !== undefined),
});

/**
 * The account's numbers, asked of the inventory over gRPC (the messaging service never reads
 * the inventory's tables). Found numbers are remembered for `cacheMs` (a released number may
 * keep sending for that long); a number that is not the account's is never cached, so a number
 * assigned a moment ago works at once.
 */
export class SenderNumbers {
  private readonly client: inventory.InventoryServiceClient;
  private readonly cache: TtlCache<SenderNumber>;

  constructor(
    address: string,
    private readonly options: { cacheMs: number; deadlineMs: number; maxEntries?: number },
  ) {
    this.client = createClient(inventory.InventoryServiceClient, address);
    this.cache = createTtlCache({
      ttlMs: options.cacheMs,
      maxEntries: options.maxEntries ?? 10_000,
    });
  }

  /** The number if it is assigned to the account, else undefined. Other failures throw. */
  async find(accountId: string, numberIdOrE164: string): Promise<SenderNumber | undefined> {
    const key = `${accountId} ${numberIdOrE164}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    try {
      const { number } = await callUnary(
        "inventory",
        this.client,
        this.client.getNumber,
        { accountId, numberIdOrE164 },
        { deadlineMs: this.options.deadlineMs },
      );
      if (!number) return undefined;
      const found = toSenderNumber(number);
      if (this.options.cacheMs > 0) this.cache.set(key, found);
      return found;
    } catch (error) {
      if (error instanceof DomainError && error.kind === "not-found") return undefined;
      throw error;
    }
  }

  /** The account a number is assigned to (for inbound traffic the network names only the number by). */
  async owner(e164: string): Promise<{ accountId: string; number: SenderNumber } | undefined> {
    const { accountId, number } = await callUnary(
      "inventory",
      this.client,
      this.client.findNumberOwner,
      { number: e164 },
      { deadlineMs: this.options.deadlineMs },
    );
    if (accountId === undefined || !number) return undefined;
    return { accountId, number: toSenderNumber(number) };
  }

  close(): void {
    this.client.close();
  }
}
