import { listenToChannel, type Logger, type Pool } from "@switchboard/kit";

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
  private readonly entries = new Map<string, ClientStatus>();
  private listening = false;
  /** Bumped by every change and every loss: a read begun before one is not kept. */
  private epoch = 0;

  constructor(
    private readonly read: (clientId: string) => Promise<ClientStatus | undefined>,
    private readonly maxEntries = 10_000,
  ) {}

  async status(clientId: string): Promise<ClientStatus | undefined> {
    const known = this.listening ? this.entries.get(clientId) : undefined;
    if (known) return known;
    const epoch = this.epoch;
    const status = await this.read(clientId);
    if (status && this.listening && epoch === this.epoch) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(clientId, status);
    }
    return status;
  }

  /** Listens for changes on `pool` (a connection of its own); call the result to stop. */
  listen(pool: Pool, logger?: Logger): { stop(): Promise<void> } {
    return listenToChannel(
      pool,
      CLIENT_STATUS_CHANNEL,
      {
        notify: (clientId) => this.forget(clientId),
        listening: () => this.reset(true),
        lost: () => this.reset(false),
      },
      logger,
    );
  }

  private forget(clientId: string): void {
    this.epoch += 1;
    this.entries.delete(clientId);
  }

  private reset(listening: boolean): void {
    this.epoch += 1;
    this.entries.clear();
    this.listening = listening;
  }
}
