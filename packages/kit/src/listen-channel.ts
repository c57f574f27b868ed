import type pg from "pg";
import type { Logger } from "pino";

export interface ChannelHandlers {
  /** A notification on the channel, with its payload. */
  notify(payload: string): void;
  /** LISTEN took effect: from now on every notification arrives (until `lost`). */
  listening?(): void;
  /** The connection was lost: notifications may be missed until the next `listening`. */
  lost?(): void;
}

/**
 * LISTEN on one channel over a dedicated pooled connection; reconnects after an error. PGlite
 * served over a socket accepts LISTEN but delivers nothing, so there it gives the connection
 * back, does not listen, and `listening` is never called.
 */
export function listenToChannel(
  pool: pg.Pool,
  channel: string,
  handlers: ChannelHandlers,
  logger?: Logger,
  retryMs = 1_000,
): { stop(): Promise<void> } {
  let stopped = false;
  let client: pg.PoolClient | undefined;
  let retry: NodeJS.Timeout | undefined;

  const drop = (error?: Error) => {
    const lost = client;
    client = undefined;
    lost?.release(error ?? true);
  };

  const connect = async (): Promise<void> => {
    retry = undefined;
    if (stopped) return;
    try {
      const next = await pool.connect();
      if (stopped) {
        next.release();
        return;
      }
      const { rows } = await next.query<{ version: string }>("SELECT version()");
      if (rows[0]?.version.includes("PGlite")) {
        next.release();
        logger?.debug({ channel }, "PGlite delivers no notifications; not listening");
        return;
      }
      client = next;
      next.on("notification", (message) => {
        if (message.channel === channel) handlers.notify(message.payload ?? "");
      });
      next.on("error", (error) => {
        logger?.warn({ err: error, channel }, "LISTEN connection lost; reconnecting");
        drop(error);
        handlers.lost?.();
        if (!stopped) retry = setTimeout(() => void connect(), retryMs).unref();
      });
      await next.query(`LISTEN "${channel}"`);
      handlers.listening?.();
    } catch (error) {
      logger?.debug({ err: error, channel }, "LISTEN unavailable");
      handlers.lost?.();
      drop(error instanceof Error ? error : undefined);
      if (!stopped) retry = setTimeout(() => void connect(), retryMs * 5).unref();
    }
  };
  void connect();

  return {
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      const current = client;
      client = undefined;
      if (!current) return;
      await current.query(`UNLISTEN "${channel}"`).catch(() => undefined);
      current.release();
    },
  };
}
