import { wire, type webhook } from "@switchboard/proto";

/** Database rows and their mapping to the contract's messages (times as RFC 3339 UTC). */
export interface SubscriptionRow {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  description: string | null;
  status: wire.SubscriptionStatusValue;
  disabled_reason: wire.DisabledReasonValue | null;
  created_at: Date;
  updated_at: Date;
  previous_secret_expires_at: Date | null;
}

export interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  status: wire.DeliveryStatusValue;
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  outcome: wire.AttemptOutcomeValue;
  error: string | null;
}

const iso = (time: Date | null): string | undefined => (time ? time.toISOString() : undefined);

/** Columns of a subscription, with the expiry of a rotated-out secret still in force. */
export const subscriptionColumns = `s.id, s.account_id, s.url, s.events, s.description, s.status,
  s.disabled_reason, s.created_at, s.updated_at,
  (SELECT max(x.expires_at) FROM webhook.subscription_secrets x
    WHERE x.subscription_id = s.id AND x.expires_at > now()) AS previous_secret_expires_at`;

export const deliveryColumns = `d.id, d.subscription_id, d.event_id, d.event_type, d.status,
  d.attempts, d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error,
  d.delivered_at, d.failed_at, d.created_at`;

export function toSubscription(row: SubscriptionRow): webhook.Subscription {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description ?? undefined,
    status: wire.subscriptionStatus.of(row.status),
    disabledReason: row.disabled_reason ? wire.disabledReason.of(row.disabled_reason) : undefined,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    previousSecretExpiresAt: iso(row.previous_secret_expires_at),
  };
}

export function toDelivery(row: DeliveryRow, attempts: AttemptRow[] = []): webhook.Delivery {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: wire.deliveryStatus.of(row.status),
    attempts: row.attempts,
    nextAttemptAt: iso(row.next_attempt_at),
    lastAttemptAt: iso(row.last_attempt_at),
    lastStatusCode: row.last_status_code ?? undefined,
    lastError: row.last_error ?? undefined,
    deliveredAt: iso(row.delivered_at),
    failedAt: iso(row.failed_at),
    createdAt: row.created_at.toISOString(),
    attemptLog: attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: a.started_at.toISOString(),
      durationMs: a.duration_ms,
      statusCode: a.status_code ?? undefined,
      outcome: wire.attemptOutcome.of(a.outcome),
      error: a.error ?? undefined,
    })),
  };
}
