import { wire, type messaging } from "@switchboard/proto";
import { iso } from "../validation.js";

export interface ConsentRow {
  id: string;
  account_id: string;
  phone_number: string;
  channels: wire.ChannelValue[];
  source: wire.ConsentSourceValue;
  evidence: Record<string, unknown> | null;
  captured_at: Date;
  status: wire.ConsentStatusValue;
  created_at: Date;
  revoked_at: Date | null;
  revocation_source: wire.RevocationSourceValue | null;
  revocation_keyword: string | null;
  request_fingerprint: string | null;
}

export const consentColumns = `c.id, c.account_id, c.phone_number, c.channels, c.source, c.evidence,
  c.captured_at, c.status, c.created_at, c.revoked_at, c.revocation_source, c.revocation_keyword,
  c.request_fingerprint`;

export const toConsent = (row: ConsentRow): messaging.Consent => ({
  id: row.id,
  phoneNumber: row.phone_number,
  channels: row.channels.map(wire.channel.of),
  source: wire.consentSource.of(row.source),
  evidenceJson: row.evidence === null ? "" : JSON.stringify(row.evidence),
  capturedAt: row.captured_at.toISOString(),
  status: wire.consentStatus.of(row.status),
  createdAt: row.created_at.toISOString(),
  revokedAt: iso(row.revoked_at),
  revocationSource: row.revocation_source
    ? wire.revocationSource.of(row.revocation_source)
    : undefined,
  revocationKeyword: row.revocation_keyword ?? undefined,
});

/** The webhook `data` of consent events. */
export const consentEventData = (row: ConsentRow): Record<string, unknown> => ({
  id: row.id,
  phone_number: row.phone_number,
  channels: row.channels,
  source: row.source,
  status: row.status,
  captured_at: row.captured_at.toISOString(),
  revoked_at: iso(row.revoked_at) ?? null,
  revocation_source: row.revocation_source,
  revocation_keyword: row.revocation_keyword,
});
