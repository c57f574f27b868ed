import type { EventBus, Logger, Pool } from "@switchboard/kit";
import type { MessagingCarrier } from "./carrier/carrier.js";
import type { MessagingConfig } from "./config.js";
import type { Outbox } from "./outbox.js";
import type { SenderNumbers } from "./sender-numbers.js";
import type { TemplateSigner } from "./templates/signature.js";

/** What the operations of the service share. */
export interface MessagingContext {
  pool: Pool;
  bus: EventBus;
  logger: Logger;
  config: MessagingConfig;
  signer: TemplateSigner;
  outbox: Outbox;
  numbers: SenderNumbers;
  carrier: MessagingCarrier;
}

/** Advisory lock on one Idempotency-Key of one account for one kind of resource. */
export const idempotencyLockSql = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";
export const idempotencyLockKey = (kind: string, accountId: string, key: string): string =>
  `switchboard:messaging:${kind}:${accountId}:${key}`;
