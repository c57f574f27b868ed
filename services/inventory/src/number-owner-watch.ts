import { credentialOf, listenToChannel, type Logger, type Pool } from "@switchboard/kit";
import { status, type ServerWritableStream } from "@grpc/grpc-js";
import type { inventory } from "@switchboard/proto";

/** The NOTIFY channel a change of a number's owner or seat signals (its E.164; the migration). */
export const NUMBER_OWNER_CHANNEL = "inventory_number_owner";

/** How often a watcher hears `listening` when nothing changes: its proof the stream still works. */
export const WATCH_HEARTBEAT_MS = 1_000;

type Watcher = ServerWritableStream<
  inventory.WatchNumberOwnersRequest,
  inventory.WatchNumberOwnersResponse
>;

export interface NumberOwnerWatch {
  /** The WatchNumberOwners handler. */
  handle(call: Watcher): void;
  /** Ends every watcher's stream (they turn to another replica) and stops listening. */
  stop(): Promise<void>;
}

/**
 * WatchNumberOwners: each watcher hears `listening` once this process LISTENs on
 * NUMBER_OWNER_CHANNEL (and every second after, as a heartbeat), then the E.164 of every
 * number whose owner or seat changes, at the change's commit. When the LISTEN connection is
 * lost every stream ends UNAVAILABLE, since changes may now pass unheard; a watcher that comes
 * back hears `listening` only once LISTEN is up again. PGlite delivers no notifications, so
 * there a watcher never hears `listening` and never remembers anything.
 */
export function startNumberOwnerWatch(pool: Pool, logger: Logger): NumberOwnerWatch {
  const watchers = new Set<Watcher>();
  let listening = false;
  let heartbeat: NodeJS.Timeout | undefined;

  const sendAll = (message: inventory.WatchNumberOwnersResponse) => {
    for (const watcher of watchers) watcher.write(message);
  };
  const beat = () => {
    const due = listening && watchers.size > 0;
    if (due && !heartbeat) {
      heartbeat = setInterval(() => sendAll({ number: "", listening: true }), WATCH_HEARTBEAT_MS);
      heartbeat.unref();
    } else if (!due && heartbeat) {
      clearInterval(heartbeat);
      heartbeat = undefined;
    }
  };
  const endAll = (details: string) => {
    const ending = [...watchers];
    watchers.clear();
    beat();
    for (const watcher of ending) watcher.emit("error", { code: status.UNAVAILABLE, details });
  };

  const listener = listenToChannel(
    pool,
    NUMBER_OWNER_CHANNEL,
    {
      notify: (e164) => sendAll({ number: e164, listening: false }),
      listening: () => {
        listening = true;
        sendAll({ number: "", listening: true });
        beat();
      },
      lost: () => {
        if (!listening) return;
        listening = false;
        endAll("the inventory stopped hearing of number changes");
      },
    },
    logger,
  );

  return {
    handle(call) {
      if (credentialOf(call).accountId !== "") {
        call.emit("error", {
          code: status.PERMISSION_DENIED,
          details: "only platform services watch number owners",
        });
        return;
      }
      watchers.add(call);
      const forget = () => {
        watchers.delete(call);
        beat();
      };
      call.on("cancelled", forget);
      call.on("close", forget);
      if (listening) call.write({ number: "", listening: true });
      beat();
    },
    async stop() {
      listening = false;
      endAll("the inventory is shutting down");
      await listener.stop();
    },
  };
}
