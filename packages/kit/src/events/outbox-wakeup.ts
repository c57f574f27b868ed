import type pg from "pg";
import type { Logger } from "pino";

/**
 * LISTEN on one channel over a dedicated pooled connection, calling `onNotify` for every
 * notification; reconnects after an error. PGlite served over a socket accepts LISTEN but
 * delivers nothing, so there it gives the connection back and does not listen. It is only ever
 * an accelerator: the relay's polling is the floor.
 */
export function listenForWakeups(
  pool: pg.Pool,
  channel: string,
  onNotify: () => void,
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
        logger?.debug({ channel }, "PGlite delivers no notifications; outbox relay polls only");
        return;
      }
      client = next;
      next.on("notification", (message) => {
        if (message.channel === channel) onNotify();
      });
      next.on("error", (error) => {
        logger?.warn({ err: error, channel }, "outbox LISTEN connection lost; reconnecting");
        drop(error);
        if (!stopped) retry = setTimeout(() => void connect(), retryMs).unref();
      });
      await next.query(`LISTEN "${channel}"`);
      onNotify(); // catch anything committed while not listening
    } catch (error) {
      logger?.debug({ err: error, channel }, "outbox LISTEN unavailable; polling only");
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
