import {
  callUnary,
  createClient,
  holdServerStream,
  NotifiedCache,
  type Logger,
} from "@switchboard/kit";
import { inventory } from "@switchboard/proto";

/** A number as call-control needs it (caller ids, route numbers, DIDs). */
export interface OwnedNumber {
  id: string;
  number: string;
  /** The seat the number is assigned to, if any. */
  seatId: string | undefined;
}

/** Who owns an E.164 number (FindNumberOwner's answer); both unset when nobody does. */
interface NumberOwner {
  accountId: string | undefined;
  number: OwnedNumber | undefined;
}

/** Asks the inventory which numbers an account owns (call-control reads no other schema). */
export interface NumberDirectory {
  /** The number if it is assigned to the account, else undefined. */
  owned(accountId: string, e164: string): Promise<OwnedNumber | undefined>;
  /** The account a number is assigned to (a DID an inbound call comes to), if any. */
  ownerOf(e164: string): Promise<string | undefined>;
  close(): void;
}

export interface DirectoryOptions {
  deadlineMs: number;
  logger?: Logger;
  /** After a watch ends, how long until it is opened again (default 1 s). */
  rewatchMs?: number;
  /** Owners are remembered only while the watch was heard from this recently (default 3 s). */
  silenceMs?: number;
}

/**
 * The inventory's answers about numbers, remembered while its WatchNumberOwners stream tells of
 * every change of an owner or seat (the change reaches every replica at its commit, and a
 * caller id's attestation depends on its seat); while the stream is down, or silent for longer
 * than `silenceMs` (its heartbeat comes every second), every lookup asks the inventory.
 */
export function connectInventory(address: string, options: DirectoryOptions): NumberDirectory {
  const client = createClient(inventory.InventoryServiceClient, address);
  const owners = new NotifiedCache<NumberOwner>({ silenceMs: options.silenceMs ?? 3_000 });
  const findOwner = async (e164: string): Promise<NumberOwner> => {
    const { accountId, number } = await callUnary(
      "inventory",
      client,
      client.findNumberOwner,
      { number: e164 },
      { deadlineMs: options.deadlineMs },
    );
    const assigned = number?.status === inventory.NumberStatus.ASSIGNED;
    return {
      accountId: assigned ? accountId || undefined : undefined,
      number:
        assigned && number
          ? { id: number.id, number: number.number, seatId: number.seatId }
          : undefined,
    };
  };
  const ownerOf = (e164: string) => owners.get(e164, () => findOwner(e164));
  const watch = holdServerStream(
    "inventory",
    client,
    client.watchNumberOwners,
    {},
    {
      data: (change) => (change.listening ? owners.listening() : owners.changed(change.number)),
      ended: (error) => {
        owners.lost();
        options.logger?.debug(
          { err: error },
          "the number-owner watch ended; reading until it is back",
        );
      },
    },
    options.rewatchMs,
  );
  return {
    async owned(accountId, e164) {
      const owner = await ownerOf(e164);
      return owner.accountId === accountId ? owner.number : undefined;
    },
    async ownerOf(e164) {
      return (await ownerOf(e164)).accountId;
    },
    close: () => {
      watch.stop();
      client.close();
    },
  };
}
