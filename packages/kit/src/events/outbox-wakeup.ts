import type pg from "pg";
import type { Logger } from "pino";
import { listenToChannel } from "../listen-channel.js";

/**
 * LISTEN on the outbox's channel, calling `onNotify` for every notification and once LISTEN
 * took effect (to catch anything committed while not listening). It is only ever an
 * accelerator: the relay's polling is the floor.
 */
export function listenForWakeups(
  pool: pg.Pool,
  channel: string,
  onNotify: () => void,
  logger?: Logger,
  retryMs = 1_000,
): { stop(): Promise<void> } {
  return listenToChannel(pool, channel, { notify: onNotify, listening: onNotify }, logger, retryMs);
}
