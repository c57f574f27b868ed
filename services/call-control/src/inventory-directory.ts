import { callUnary, createClient, openServerStream, type Logger } from "@switchboard/kit";
import { inventory } from "@switchboard/proto";
import { NumberOwnerCache, type NumberOwner, type OwnedNumber } from "./number-owner-cache.js";

export type { OwnedNumber } from "./number-owner-cache.js";

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
  const owners = new NumberOwnerCache(
    async (e164): Promise<NumberOwner> => {
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
    },
    { silenceMs: options.silenceMs ?? 3_000 },
  );
  const watch = watchNumberOwners(client, owners, options);
  return {
    async owned(accountId, e164) {
      const owner = await owners.lookup(e164);
      return owner.accountId === accountId ? owner.number : undefined;
    },
    async ownerOf(e164) {
      return (await owners.lookup(e164)).accountId;
    },
    close: () => {
      watch.stop();
      client.close();
    },
  };
}

/** Holds WatchNumberOwners open, feeding `owners`; opens it again `rewatchMs` after it ends. */
function watchNumberOwners(
  client: inventory.InventoryServiceClient,
  owners: NumberOwnerCache,
  options: DirectoryOptions,
): { stop(): void } {
  let stopped = false;
  let stream: ReturnType<typeof client.watchNumberOwners> | undefined;
  let retry: NodeJS.Timeout | undefined;

  const ended = (error?: Error) => {
    owners.lost();
    stream = undefined;
    if (stopped || retry) return;
    options.logger?.debug({ err: error }, "the number-owner watch ended; reading until it is back");
    retry = setTimeout(open, options.rewatchMs ?? 1_000);
    retry.unref();
  };
  const open = () => {
    retry = undefined;
    if (stopped) return;
    openServerStream("inventory", client, client.watchNumberOwners, {}).then((opened) => {
      if (stopped) {
        opened.cancel();
        return;
      }
      stream = opened;
      opened.on("data", (change: inventory.WatchNumberOwnersResponse) => {
        if (change.listening) owners.listening();
        else owners.changed(change.number);
      });
      opened.on("error", (error) => stream === opened && ended(error));
      opened.on("end", () => stream === opened && ended());
    }, ended);
  };
  open();

  return {
    stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      stream?.cancel();
    },
  };
}
