import { wire } from "@switchboard/proto";
import type { ConsumerGroup } from "./events/index.js";

/**
 * The platform's consumer groups: every outbox relay publishes each batch's matching events to
 * each of these groups, as one job (`events.<name>.batches`: both are batched). Defined once so a group that is not running yet still gets
 * its backlog.
 */
export const platformConsumerGroups: ConsumerGroup[] = [
  {
    name: "usage",
    // Every usage kind is a business fact's event type but api.request (the record path's).
    types: wire.usageKind.values.filter((kind) => kind !== "api.request"),
    batched: true,
  },
  { name: "webhook", batched: true },
];

/**
 * The record path's queue: the gateway publishes every reply's `api.request` record here
 * (a `switchboard.usage.v1.RequestRecordBatch` in proto3 JSON) before the reply is sent; the
 * usage service consumes it and stores each record once by request id.
 */
export const usageRecordQueue = "usage.records";
