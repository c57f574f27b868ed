import type { EventBus, Logger, Pool } from "@switchboard/kit";
import type { WebhookSettings } from "./config.js";
import type { Dispatcher } from "./dispatch.js";
import type { SecretBox } from "./secret-box.js";
import type { GuardOptions } from "./url-guard.js";

/** What the webhook service's operations share. */
export interface WebhookContext {
  pool: Pool;
  bus: EventBus;
  logger: Logger;
  settings: WebhookSettings;
  box: SecretBox;
  /** The SSRF guard's options (exemptions, the internal sink's origin, the resolver). */
  guard: GuardOptions;
  dispatcher: Dispatcher;
  /** The internal sink's URL (the agent smoke's receiver). */
  sinkUrl: string;
}

/** The service's Postgres schema. */
export const schema = "webhook";
