import type { messaging } from "@switchboard/proto";
import { iso } from "../validation.js";

export interface ConsentRow {
  id: string;
  account_id: string;
  phone_number: string;
  channels: string[];
  source: string;
  evidence: Record<string, unknown> | null;
  captured_at: Date;
  status: string;
  created_at: Date;
  revoked_at: Date | null;
  revocation_source: string | null;
  revocation_keyword: string | null;
  request_fingerprint: string | null;
}

export const consentColumns = `c.id, c.account_id, c.phone_number, c.channels, c.source, c.evidence,
  c.captured_at, c.status, c.created_at, c.revoked_at, c.revocation_source, c.revocation_keyword,
  c.request_fingerprint`;

export const toConsent = (row: ConsentRow): messaging.Consent => ({
  id: row.id,
  phoneNumber: row.phone_number,
  channels: row.channels,
  source: row.source,
  evidenceJson: row.evidence === null ? "" : JSON.stringify(row.evidence),
  capturedAt: row.captured_at.toISOString(),
  status: row.status,
  createdAt: row.created_at.toISOString(),
  revokedAt: iso(row.revoked_at),
  revocationSource: row.revocation_source ?? undefined,
  revocationKeyword: row.revocation_keyword ?? undefined,
});

/** The webhook `data` of consent events. */
export const consentEventData = (consent: messaging.Consent): Record<string, unknown> => ({
  id: consent.id,
  phone_number: consent.phoneNumber,
  channels: consent.channels,
  source: consent.source,
  status: consent.status,
  captured_at: consent.capturedAt,
  revoked_at: consent.revokedAt ?? null,
  revocation_source: consent.revocationSource ?? null,
  revocation_keyword: consent.revocationKeyword ?? null,
});
