import type { BatchedWork, EventBus, Logger, Pool } from "@switchboard/kit";
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
  /**
   * Runs delivery work (a claim, the sandbox network taking a message, recording `sent`,
   * applying a receipt) in a transaction shared with the work submitted at about the same
   * time: one commit for all of it (kit's batchTransactions, MESSAGING_GROUP_COMMIT_MS). Its
   * batches run side by side, so its work locks only the rows of the messages it is about.
   */
  groupCommit: <R>(work: BatchedWork<R>) => Promise<R>;
  /** The same for the claims that book a turn (and lock their sender's row): one batch at a time. */
  bookingCommit: <R>(work: BatchedWork<R>) => Promise<R>;
}
