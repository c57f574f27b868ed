import { wire, type webhook } from "@switchboard/proto";

/** The webhook service's messages as the REST API shows them (snake_case, null for unset). */
export const toSubscription = (s: webhook.Subscription | undefined) => ({
  id: s?.id ?? "",
  url: s?.url ?? "",
  events: s?.events ?? [],
  description: s?.description ?? null,
  status: (s && wire.subscriptionStatus.spell(s.status)) ?? "",
  disabled_reason: (s?.disabledReason && wire.disabledReason.spell(s.disabledReason)) ?? null,
  previous_secret_expires_at: s?.previousSecretExpiresAt ?? null,
  created_at: s?.createdAt ?? "",
  updated_at: s?.updatedAt ?? "",
});

export const toDelivery = (d: webhook.Delivery | undefined) => ({
  id: d?.id ?? "",
  subscription_id: d?.subscriptionId ?? "",
  event_id: d?.eventId ?? "",
  event_type: d?.eventType ?? "",
  status: (d && wire.deliveryStatus.spell(d.status)) ?? "",
  attempts: d?.attempts ?? 0,
  next_attempt_at: d?.nextAttemptAt ?? null,
  last_attempt_at: d?.lastAttemptAt ?? null,
  last_status_code: d?.lastStatusCode ?? null,
  last_error: d?.lastError ?? null,
  delivered_at: d?.deliveredAt ?? null,
  failed_at: d?.failedAt ?? null,
  created_at: d?.createdAt ?? "",
});

export const toDeliveryDetail = (d: webhook.Delivery | undefined) => ({
  ...toDelivery(d),
  attempt_log: (d?.attemptLog ?? []).map((a) => ({
    attempt: a.attempt,
    started_at: a.startedAt,
    duration_ms: a.durationMs,
    status_code: a.statusCode ?? null,
    outcome: wire.attemptOutcome.spell(a.outcome) ?? "",
    error: a.error ?? null,
  })),
});
