import { NotifiedCache, type Logger, type Pool, type Queryable } from "@switchboard/kit";

/** An active subscription as fan-out needs it: its id and the event patterns it selects. */
export interface ActiveSubscription {
  id: string;
  events: string[];
}

/** The account's active subscriptions as they stand, by id. */
export type ActiveSubscriptions = (accountId: string) => Promise<ActiveSubscription[]>;

/** Where the trigger of migration 1796200000000 names each account whose subscriptions changed. */
export const subscriptionsChannel = "webhook_subscriptions";

export const readActiveSubscriptions =
  (db: Queryable): ActiveSubscriptions =>
  async (accountId) =>
    (
      await db.query<ActiveSubscription>(
        `SELECT id, events FROM webhook.subscriptions
          WHERE account_id = $1 AND status = 'active' AND purpose = 'subscription' ORDER BY id`,
        [accountId],
      )
    ).rows;

/**
 * Each account's active subscriptions, remembered while a LISTEN connection hears every change
 * to them (on any replica: the table's trigger notifies at commit), and read from the table
 * whenever it does not: before LISTEN took effect, after its connection was lost, and on
 * PGlite, which delivers no notifications. A change reaches the cache with its notification,
 * milliseconds after its commit. A read that a change overtook is used but not remembered.
 */
export function startSubscriptionCache(options: {
  pool: Pool;
  logger: Logger;
  maxAccounts?: number;
}): { read: ActiveSubscriptions; stop(): Promise<void> } {
  const fromTable = readActiveSubscriptions(options.pool);
  const remembered = new NotifiedCache<ActiveSubscription[]>({
    maxEntries: options.maxAccounts ?? 10_000,
  });
  const listener = remembered.listenTo(options.pool, subscriptionsChannel, options.logger);
  return {
    read: (accountId) => remembered.get(accountId, () => fromTable(accountId)),
    stop: () => listener.stop(),
  };
}
