import { NotifiedCache, type Logger, type Pool } from "@switchboard/kit";

/** What a token's check needs of its client. */
export interface ClientStatus {
  active: boolean;
  accountId: string;
}

/** The NOTIFY channel a change of a `gateway.clients` row signals (its client id). */
export const CLIENT_STATUS_CHANNEL = "gateway_client_status";

/**
 * The clients' status as this gateway last read it, kept only while it is told of every change:
 * while its LISTEN on CLIENT_STATUS_CHANNEL is up, a change of a client forgets that client (on
 * every replica, at the change's commit); when the LISTEN connection is lost, or never came up
 * (PGlite delivers no notifications), every check reads the row, as without a cache. A read
 * that a change overtook is not kept.
 */
export class ClientStatusCache {
  private readonly cache: NotifiedCache<ClientStatus | undefined>;

  constructor(
    private readonly read: (clientId: string) => Promise<ClientStatus | undefined>,
    maxEntries = 10_000,
  ) {
    this.cache = new NotifiedCache({ maxEntries, keep: (status) => status !== undefined });
  }

  status(clientId: string): Promise<ClientStatus | undefined> {
    return this.cache.get(clientId, () => this.read(clientId));
  }

  /** Listens for changes on `pool` (a connection of its own); call the result to stop. */
  listen(pool: Pool, logger?: Logger): { stop(): Promise<void> } {
    return this.cache.listenTo(pool, CLIENT_STATUS_CHANNEL, logger);
  }
}
