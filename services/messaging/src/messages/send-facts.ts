import type { Queryable } from "@switchboard/kit";
import type { SendRequest } from "./send-checks.js";
import { messageColumns, type MessageRow } from "./rows.js";

export interface SendTemplate {
  id: string;
  name: string;
  version: number;
  channels: string[];
  body: string;
  variables: string[];
  status: string;
  content_sha256: string;
  signature: string;
  kid: string;
}

export interface SendConsent {
  id: string;
  phone_number: string;
  channels: string[];
  status: string;
}

export interface SendFacts {
  /** The message already sent with this Idempotency-Key, if any. */
  previous: MessageRow | null;
  template: SendTemplate | null;
  consent: SendConsent | null;
  optOut: { keyword: string } | null;
}

const dateColumns = [
  "expires_at",
  "lease_until",
  "scheduled_at",
  "created_at",
  "updated_at",
  "sent_at",
  "delivered_at",
  "read_at",
] as const;

/** A message row that went through row_to_json: its times are strings again. */
function fromJson(json: Record<string, unknown>): MessageRow {
  const row: Record<string, unknown> = { ...json };
  for (const column of dateColumns) {
    const value = row[column];
    row[column] = typeof value === "string" ? new Date(value) : null;
  }
  return row as unknown as MessageRow;
}

/** Everything a send checks in the service's own tables, read in one round trip. */
export async function loadSendFacts(
  db: Queryable,
  request: SendRequest,
  idempotencyKey: string | undefined,
): Promise<SendFacts> {
  const { rows } = await db.query<{
    previous: Record<string, unknown> | null;
    template: SendTemplate | null;
    consent: SendConsent | null;
    opt_out: { keyword: string } | null;
  }>(
    `SELECT
       (SELECT row_to_json(x) FROM (
          SELECT ${messageColumns} FROM messaging.messages m
           WHERE $6::text IS NOT NULL AND m.account_id = $1 AND m.idempotency_key = $6) x) AS previous,
       (SELECT row_to_json(x) FROM (
          SELECT t.id, v.name, v.version, v.channels, v.body, v.variables, v.status,
                 v.content_sha256, v.signature, v.kid
            FROM messaging.templates t
            JOIN messaging.template_versions v ON v.template_id = t.id
           WHERE t.id = $2 AND t.account_id = $1
             AND v.version = coalesce($3::int, t.latest_version)) x) AS template,
       (SELECT row_to_json(x) FROM (
          SELECT c.id, c.phone_number, c.channels, c.status
            FROM messaging.consents c WHERE c.id = $4 AND c.account_id = $1) x) AS consent,
       (SELECT row_to_json(x) FROM (
          SELECT o.keyword FROM messaging.opt_outs o
           WHERE o.account_id = $1 AND o.phone_number = $5) x) AS opt_out`,
    [
      request.accountId,
      request.templateId,
      request.templateVersion ?? null,
      request.consentId,
      request.to,
      idempotencyKey ?? null,
    ],
  );
  const row = rows[0];
  return {
    previous: row?.previous ? fromJson(row.previous) : null,
    template: row?.template ?? null,
    consent: row?.consent ?? null,
    optOut: row?.opt_out ?? null,
  };
}
