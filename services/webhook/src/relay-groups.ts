import { platformConsumerGroups, type ConsumerGroup } from "@switchboard/kit";
import { webhookEventTypes } from "./event-catalog.js";

/**
 * The consumer groups this service's outbox relay feeds: the platform's, except that the
 * `webhook` group (fan-out) only gets the types subscriptions can receive. Without that, every
 * `webhook.delivered` usage fact would come back to the fan-out queue as a job that does
 * nothing — a second job for every delivery.
 */
export const webhookRelayGroups: ConsumerGroup[] = platformConsumerGroups.map((group) =>
  group.name === "webhook" ? { ...group, types: [...webhookEventTypes] } : group,
);
