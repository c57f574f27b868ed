import { type GrpcService, requireAccount, unary } from "@switchboard/kit";
import { webhook } from "@switchboard/proto";
import type { WebhookContext } from "./context.js";
import { getDelivery, listDeliveries, retryDelivery } from "./deliveries.js";
import { getEvent, listEvents } from "./events.js";
import { listSinkReceipts } from "./sink.js";
import { checkStatusCallback, statusCallbackSecret } from "./status-callbacks.js";
import { getSubscription, listSubscriptions } from "./subscription-queries.js";
import {
  createSubscription,
  deleteSubscription,
  rotateSubscriptionSecret,
  updateSubscription,
} from "./subscriptions.js";
import { testSubscription } from "./test-event.js";

/** The WebhookService gRPC handlers: each a thin adapter over one operation module. */
export function createWebhookService(ctx: WebhookContext): GrpcService {
  const { pool, logger } = ctx;
  const implementation: webhook.WebhookServiceServer = {
    createSubscription: unary(logger, (request: webhook.CreateSubscriptionRequest, context) =>
      createSubscription(ctx, request, context.idempotencyKey),
    ),
    listSubscriptions: unary(logger, (request: webhook.ListSubscriptionsRequest) =>
      listSubscriptions(pool, request),
    ),
    getSubscription: unary(logger, async (request: webhook.GetSubscriptionRequest) => ({
      subscription: await getSubscription(pool, request),
    })),
    updateSubscription: unary(logger, async (request: webhook.UpdateSubscriptionRequest) => ({
      subscription: await updateSubscription(ctx, request),
    })),
    deleteSubscription: unary(logger, async (request: webhook.DeleteSubscriptionRequest) => {
      await deleteSubscription(ctx, request);
      return {};
    }),
    rotateSubscriptionSecret: unary(logger, (request: webhook.RotateSubscriptionSecretRequest) =>
      rotateSubscriptionSecret(ctx, request),
    ),
    testSubscription: unary(logger, async (request: webhook.TestSubscriptionRequest, context) => ({
      delivery: await testSubscription(ctx, request, context.idempotencyKey),
    })),
    listDeliveries: unary(logger, (request: webhook.ListDeliveriesRequest) =>
      listDeliveries(pool, request),
    ),
    getDelivery: unary(logger, async (request: webhook.GetDeliveryRequest) => ({
      delivery: await getDelivery(pool, request),
    })),
    retryDelivery: unary(logger, async (request: webhook.RetryDeliveryRequest) => ({
      delivery: await retryDelivery(ctx, request),
    })),
    listEvents: unary(logger, (request: webhook.ListEventsRequest) => listEvents(pool, request)),
    getEvent: unary(logger, async (request: webhook.GetEventRequest) => ({
      event: await getEvent(pool, request),
    })),
    checkStatusCallback: unary(logger, async (request: webhook.CheckStatusCallbackRequest) => ({
      statusCallback: await checkStatusCallback(ctx, request),
    })),
    getStatusCallbackSecret: unary(
      logger,
      async (request: webhook.GetStatusCallbackSecretRequest) => ({
        secret: await statusCallbackSecret(ctx, request.accountId, false),
      }),
    ),
    rotateStatusCallbackSecret: unary(
      logger,
      async (request: webhook.RotateStatusCallbackSecretRequest) => ({
        secret: await statusCallbackSecret(ctx, request.accountId, true),
      }),
    ),
    getInternalSink: unary(logger, async (request: webhook.GetInternalSinkRequest) => {
      requireAccount(request.accountId).throwIfAny();
      return { url: ctx.sinkUrl };
    }),
    listSinkReceipts: unary(logger, async (request: webhook.ListSinkReceiptsRequest) => {
      requireAccount(request.accountId).throwIfAny();
      return { receipts: await listSinkReceipts(pool, request) };
    }),
  };
  return { definition: webhook.WebhookServiceService, implementation };
}
