import {
  callUnary,
  createClient,
  DomainError,
  holdServerStream,
  NotifiedCache,
  type Logger,
} from "@switchboard/kit";
import { inventory, wire } from "@switchboard/proto";

export interface SenderNumber {
  id: string;
  number: string;
  /** As the API spells them (sms, mms…). */
  capabilities: wire.CapabilityValue[];
}

/** Who owns a number an inbound message came to. */
export interface NumberOwner {
  accountId: string;
  number: SenderNumber;
}

const toSenderNumber = (number: inventory.PhoneNumber): SenderNumber => ({
  id: number.id,
  number: number.number,
  capabilities: number.capabilities.map(wire.capability.spell).filter((c) => c !== undefined),
});

export interface SenderNumbersOptions {
  deadlineMs: number;
  logger?: Logger;
  /** After the watch ends, how long until it is opened again (default 1 s). */
  rewatchMs?: number;
  /** Answers are remembered only while the watch was heard from this recently (default 3 s). */
  silenceMs?: number;
}

/**
 * The account's numbers, asked of the inventory over gRPC (the messaging service never reads
 * the inventory's tables), and remembered while the inventory's WatchNumberOwners stream tells
 * of every change of a number's owner: a number released or assigned is forgotten on every
 * replica at its commit. While the stream is down, or silent for longer than `silenceMs` (its
 * heartbeat comes every second), every lookup asks the inventory. A number that is not the
 * account's is not remembered by `find` (it may be named by its id, which a change does not
 * name).
 */
export class SenderNumbers {
  private readonly client: inventory.InventoryServiceClient;
  private readonly senders: NotifiedCache<SenderNumber | undefined>;
  private readonly owners: NotifiedCache<NumberOwner | undefined>;
  private readonly watch: { stop(): void };

  constructor(
    address: string,
    private readonly options: SenderNumbersOptions,
  ) {
    this.client = createClient(inventory.InventoryServiceClient, address);
    const silenceMs = options.silenceMs ?? 3_000;
    this.senders = new NotifiedCache({
      silenceMs,
      keep: (sender) => sender !== undefined,
      namesOf: (sender) => (sender ? [sender.number] : []),
    });
    this.owners = new NotifiedCache({ silenceMs });
    const caches = [this.senders, this.owners];
    this.watch = holdServerStream(
      "inventory",
      this.client,
      this.client.watchNumberOwners,
      {},
      {
        data: (change) => {
          for (const cache of caches) {
            if (change.listening) cache.listening();
            else cache.changed(change.number);
          }
        },
        ended: (error) => {
          for (const cache of caches) cache.lost();
          options.logger?.debug(
            { err: error },
            "the number-owner watch ended; reading until it is back",
          );
        },
      },
      options.rewatchMs,
    );
  }

  /** The number if it is assigned to the account, else undefined. Other failures throw. */
  find(accountId: string, numberIdOrE164: string): Promise<SenderNumber | undefined> {
    return this.senders.get(`${accountId} ${numberIdOrE164}`, async () => {
      try {
        const { number } = await callUnary(
          "inventory",
          this.client,
          this.client.getNumber,
          { accountId, numberIdOrE164 },
          { deadlineMs: this.options.deadlineMs },
        );
        return number && toSenderNumber(number);
      } catch (error) {
        if (error instanceof DomainError && error.kind === "not-found") return undefined;
        throw error;
      }
    });
  }

  /** The account a number is assigned to (for inbound traffic the network names only the number by). */
  owner(e164: string): Promise<NumberOwner | undefined> {
    return this.owners.get(e164, async () => {
      const { accountId, number } = await callUnary(
        "inventory",
        this.client,
        this.client.findNumberOwner,
        { number: e164 },
        { deadlineMs: this.options.deadlineMs },
      );
      if (!accountId || !number) return undefined;
      return { accountId, number: toSenderNumber(number) };
    });
  }

  close(): void {
    this.watch.stop();
    this.client.close();
  }
}
