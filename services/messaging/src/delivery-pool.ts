import pg from "pg";
import { supervisePool, type Pool } from "@switchboard/kit";

/**
 * The delivery pipeline's own connections (a bulkhead): relays, dispatcher, submit and receipt
 * workers, the sweeper and the sandbox network never queue API requests behind them for a
 * connection. Opened on the same server as the API pool, with `max` connections.
 */
export function openDeliveryPool(apiPool: Pool, max: number): Pool {
  const { options } = apiPool;
  const pool = new pg.Pool({
    ...options,
    password: options.password,
    max,
    // Background work waits for a connection rather than failing a try for want of one.
    connectionTimeoutMillis: 60_000,
    application_name: "messaging-delivery",
  });
  return supervisePool(pool, "messaging-delivery");
}
