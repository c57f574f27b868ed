import { wire } from "@switchboard/proto";
import { idParam } from "../schemas/common.js";
import { createdWindowRpc } from "../schemas/created-window.js";
import { anyWebhookEvent, eventsPage, eventsQuery } from "../schemas/events.js";
import {
  createSubscriptionRequest,
  deliveriesPage,
  deliveriesQuery,
  subscriptionsPage,
  subscriptionsQuery,
  updateSubscriptionRequest,
  webhookDelivery,
  webhookDeliveryDetail,
  webhookSubscription,
  webhookSubscriptionWithSecret,
  statusCallbackSecret,
} from "../schemas/webhooks.js";
import { accepted, created, ok, pageReply } from "./replies.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toDelivery, toDeliveryDetail, toSubscription } from "./views/webhooks.js";
import { story, storyDelivery } from "../schemas/story.js";

const createDescription = [
  "The url must be https to a public address: the host is resolved and every address checked",
  "(loopback, private, link-local, CGNAT, cloud metadata, multicast, IPv4-mapped IPv6 and reserved",
  "ranges are refused with 422 unsafe-webhook-url, however the address is spelled); the check runs",
  "again before every delivery and the connection goes to the checked address; a host that does",
  "not resolve right now is accepted, since that check decides. Targets listed in",
  "WEBHOOK_ALLOW_PRIVATE_HOSTS (host and port) are exempt (plain http allowed). `events` takes types from the",
  "webhook catalog, prefix wildcards (`call.*`) or `*`. The response carries the signing secret",
  "(whsec_…), shown only here and on rotation. Deliveries follow Standard Webhooks 1.0: POST",
  "{id, type, timestamp, account_id, sequence, data} with webhook-id (the event id, stable across",
  "retries), webhook-timestamp and webhook-signature (v1,<base64 HMAC-SHA256 of id.timestamp.body>).",
  "2xx is delivered; other answers and timeouts (10 s) are retried on the configured schedule",
  "(default 5s, 5m, 30m, 2h, 5h, 10h, 14h, 20h, 24h) with jitter, at least Retry-After apart;",
  "redirects are not followed; 410 disables the subscription. At most 100 subscriptions per account.",
].join(" ");

const subscriptionPath = idParam("whs", "subscription_id");
const deliveryPath = idParam("wdl", "delivery_id");
const eventPath = idParam("evt", "event_id");
const parsePayload = (event: { payload: string }) => JSON.parse(event.payload) as unknown;
const toCallbackSecret = (
  secret: { subscriptionId: string; secret: string; previousSecretExpiresAt?: string } | undefined,
) => ({
  subscription_id: secret?.subscriptionId ?? "",
  secret: secret?.secret ?? "",
  previous_secret_expires_at: secret?.previousSecretExpiresAt ?? null,
});
const tag = "Webhooks";

/** Webhook subscriptions and their deliveries (webhooks:read / webhooks:write). */
export const webhookRoutes: RouteSpec[] = [
  defineRoute({
    method: "post",
    path: "/api/webhooks/subscriptions",
    operationId: "createWebhookSubscription",
    examples: {
      request: {
        url: story.webhookUrl,
        events: ["call.*", "message.delivered"],
        description: "Order desk: call and delivery updates",
      },
    },
    summary: "Create a webhook subscription",
    description: createDescription,
    tag,
    scope: "webhooks:write",
    body: createSubscriptionRequest,
    success: {
      status: 201,
      description: "The subscription with its signing secret (shown once)",
      schema: webhookSubscriptionWithSecret,
      headers: ["Location"],
    },
    problems: ["unsafe-webhook-url", "validation-failed", "conflict"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.createSubscription, {
        url: ctx.body.url,
        events: ctx.body.events,
        description: ctx.body.description,
      });
      const body = { ...toSubscription(response.subscription), secret: response.secret };
      return created(`/v1/api/webhooks/subscriptions/${body.id}`, body);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/webhooks/subscriptions",
    operationId: "listWebhookSubscriptions",
    summary: "List webhook subscriptions",
    description: "The account's subscriptions, newest first. Secrets are never listed.",
    tag,
    scope: "webhooks:read",
    query: subscriptionsQuery,
    paginated: true,
    success: { status: 200, description: "A page of subscriptions", schema: subscriptionsPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.listSubscriptions, {
        limit: ctx.query.limit,
        cursor: ctx.query.cursor ?? "",
      });
      return pageReply(ctx.req, response.subscriptions.map(toSubscription), response.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/webhooks/subscriptions/{subscription_id}",
    operationId: "getWebhookSubscription",
    summary: "Get a webhook subscription",
    description:
      "One subscription with its URL, events and state. Its secret is shown only at creation and rotation.",
    tag,
    scope: "webhooks:read",
    params: subscriptionPath,
    success: { status: 200, description: "The subscription", schema: webhookSubscription },
    problems: ["not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.getSubscription, {
        subscriptionId: ctx.params.subscription_id,
      });
      return ok(toSubscription(response.subscription));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/api/webhooks/subscriptions/{subscription_id}",
    operationId: "updateWebhookSubscription",
    summary: "Update a webhook subscription",
    description:
      "Changes url (checked like at creation), events, description or status. Absent fields are kept. status paused stops deliveries: no new events are queued for it and its pending deliveries end failed (retry them after resuming); status active resumes a paused subscription or re-enables a disabled one. A disabled subscription cannot be paused (409 invalid-state).",
    tag,
    scope: "webhooks:write",
    params: subscriptionPath,
    body: updateSubscriptionRequest,
    success: {
      status: 200,
      description: "The updated subscription",
      schema: webhookSubscription,
    },
    problems: ["not-found", "invalid-state", "unsafe-webhook-url", "validation-failed"],
    handler: async (ctx) => {
      const body = ctx.body ?? {};
      const response = await ctx.rpc.webhook((c) => c.updateSubscription, {
        subscriptionId: ctx.params.subscription_id,
        url: body.url,
        events: body.events ? { types: body.events } : undefined,
        description: body.description === null ? "" : body.description,
        status: body.status && wire.subscriptionStatus.of(body.status),
      });
      return ok(toSubscription(response.subscription));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/api/webhooks/subscriptions/{subscription_id}",
    operationId: "deleteWebhookSubscription",
    summary: "Delete a webhook subscription",
    description:
      "The subscription stops receiving events at once; its pending deliveries end failed and its secrets are erased. It is then not found.",
    tag,
    scope: "webhooks:write",
    params: subscriptionPath,
    success: { status: 204, description: "Deleted" },
    problems: ["not-found"],
    handler: async (ctx) => {
      await ctx.rpc.webhook((c) => c.deleteSubscription, {
        subscriptionId: ctx.params.subscription_id,
      });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/webhooks/subscriptions/{subscription_id}/rotate-secret",
    operationId: "rotateWebhookSecret",
    summary: "Rotate a subscription's signing secret",
    description:
      "Returns a new secret (shown once). The previous secret keeps signing beside it for 24 hours (previous_secret_expires_at), so webhook-signature carries two v1 entries meanwhile; a secret still in its overlap from an earlier rotation stops at once, so never more than two sign.",
    tag,
    scope: "webhooks:write",
    params: subscriptionPath,
    success: {
      status: 200,
      description: "The subscription with its new secret",
      schema: webhookSubscriptionWithSecret,
    },
    problems: ["not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.rotateSubscriptionSecret, {
        subscriptionId: ctx.params.subscription_id,
      });
      return ok({ ...toSubscription(response.subscription), secret: response.secret });
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/webhooks/subscriptions/{subscription_id}/test",
    operationId: "testWebhookSubscription",
    examples: {
      response: {
        ...storyDelivery,
        event_type: "webhook.test",
        status: "pending",
        attempts: 0,
        next_attempt_at: "2026-11-24T22:00:00.000Z",
        last_attempt_at: null,
        last_status_code: null,
        delivered_at: null,
        created_at: "2026-11-24T22:00:00.000Z",
      },
    },
    summary: "Send a webhook.test event to this subscription",
    description:
      "Queues a webhook.test event for this subscription only (whatever its events), delivered and retried like any other. The subscription must be active (409 invalid-state otherwise).",
    tag,
    scope: "webhooks:write",
    params: subscriptionPath,
    success: { status: 202, description: "The queued delivery", schema: webhookDelivery },
    problems: ["not-found", "invalid-state"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.testSubscription, {
        subscriptionId: ctx.params.subscription_id,
      });
      return accepted(toDelivery(response.delivery));
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/webhooks/subscriptions/{subscription_id}/deliveries",
    operationId: "listWebhookDeliveries",
    summary: "List a subscription's deliveries",
    description:
      "Newest first by created_at (then id), or oldest first with `sort=created_at`; `status`, `resource_id`, `created_after` and `created_before` filter and combine, the cursor bound to them and the order. Failed deliveries are kept and can be retried.",
    tag,
    scope: "webhooks:read",
    params: subscriptionPath,
    query: deliveriesQuery,
    paginated: true,
    success: { status: 200, description: "A page of deliveries", schema: deliveriesPage },
    problems: ["not-found", "invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.listDeliveries, {
        subscriptionId: ctx.params.subscription_id,
        status: ctx.query.status && wire.deliveryStatus.of(ctx.query.status),
        resourceId: ctx.query.resource_id,
        ...createdWindowRpc(ctx.query),
        limit: ctx.query.limit,
        cursor: ctx.query.cursor ?? "",
      });
      return pageReply(ctx.req, response.deliveries.map(toDelivery), response.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/webhooks/deliveries/{delivery_id}",
    operationId: "getWebhookDelivery",
    summary: "Get a delivery with its attempt log",
    description:
      "Every attempt with its status code, latency and error class (never a body or a secret).",
    tag,
    scope: "webhooks:read",
    params: deliveryPath,
    success: { status: 200, description: "The delivery", schema: webhookDeliveryDetail },
    problems: ["not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.getDelivery, {
        deliveryId: ctx.params.delivery_id,
      });
      return ok(toDeliveryDetail(response.delivery));
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/webhooks/deliveries/{delivery_id}/retry",
    operationId: "retryWebhookDelivery",
    examples: {
      response: {
        ...storyDelivery,
        status: "pending",
        attempts: 9,
        next_attempt_at: "2026-11-26T09:00:00.000Z",
        last_attempt_at: "2026-11-25T21:47:39.210Z",
        last_status_code: 503,
        last_error: "http_status",
        delivered_at: null,
      },
    },
    summary: "Retry a failed delivery",
    description:
      "Replays a failed delivery with a fresh retry schedule: same webhook-id and body, new signature timestamp. Only a failed delivery of an active subscription can be retried (409 invalid-state otherwise; a delivered one is final).",
    tag,
    scope: "webhooks:write",
    params: deliveryPath,
    success: { status: 202, description: "The delivery, pending again", schema: webhookDelivery },
    problems: ["not-found", "invalid-state"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.retryDelivery, {
        deliveryId: ctx.params.delivery_id,
      });
      return accepted(toDelivery(response.delivery));
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/events",
    operationId: "listEvents",
    summary: "List recent events",
    description:
      "The account's events of at least the last 3 days (WEBHOOK_EVENT_RETENTION, 7 days by default), newest first, whether or not a subscription received them: each exactly as its deliveries carry it (webhook.test events, made for one subscription, are not listed). A receiver that was down pages through them (created_after = the timestamp of the last event it processed) and dedupes on id, which is the webhook-id of every delivery of the event.",
    tag,
    scope: "webhooks:read",
    query: eventsQuery,
    paginated: true,
    success: { status: 200, description: "A page of events", schema: eventsPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.listEvents, {
        type: ctx.query.type,
        createdAfter: ctx.query.created_after,
        limit: ctx.query.limit,
        cursor: ctx.query.cursor ?? "",
      });
      return pageReply(ctx.req, response.events.map(parsePayload), response.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/events/{event_id}",
    operationId: "getEvent",
    summary: "Get a recent event",
    description: "One of the account's events, as its deliveries carry it, while it is kept.",
    tag,
    scope: "webhooks:read",
    params: eventPath,
    success: { status: 200, description: "The event", schema: anyWebhookEvent },
    problems: ["not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.getEvent, {
        eventId: ctx.params.event_id,
      });
      return ok(parsePayload(response.event!));
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/webhooks/status-callback",
    operationId: "getStatusCallbackSecret",
    summary: "Get the status-callback signing secret",
    description:
      "The secret that signs every status callback of the account (the `status_callback` of calls and messages), created on first use and shown whenever asked, as Twilio and Telnyx show the key their callbacks are verified with; it needs webhooks:write because it is a credential. Verify a status callback like any delivery (Standard Webhooks, the standardwebhooks libraries). subscription_id names the hidden subscription the callbacks are delivered under: their Switchboard-Subscription-Id and delivery log. It is not listed among the subscriptions and cannot be changed, paused or disabled (a 410 from a callback URL fails that delivery only).",
    tag,
    scope: "webhooks:write",
    success: { status: 200, description: "The secret", schema: statusCallbackSecret },
    problems: [],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.getStatusCallbackSecret, {});
      return ok(toCallbackSecret(response.secret));
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/webhooks/status-callback/rotate-secret",
    operationId: "rotateStatusCallbackSecret",
    summary: "Rotate the status-callback signing secret",
    description:
      "A new secret; the previous one keeps signing beside it for 24 hours (previous_secret_expires_at), as a subscription's does.",
    tag,
    scope: "webhooks:write",
    success: { status: 200, description: "The new secret", schema: statusCallbackSecret },
    problems: [],
    handler: async (ctx) => {
      const response = await ctx.rpc.webhook((c) => c.rotateStatusCallbackSecret, {});
      return ok(toCallbackSecret(response.secret));
    },
  }),
];
