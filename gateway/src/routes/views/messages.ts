import { wire, type messaging } from "@switchboard/proto";

const spellChannels = (channels: messaging.Channel[] = []) =>
  channels.map((c) => wire.channel.spell(c) ?? "");

/** gRPC messaging resources → the JSON of docs/api.md (snake_case, explicit nulls). */
export const toMessageJson = (m: messaging.Message | undefined) => ({
  id: m?.id ?? "",
  direction: (m && wire.messageDirection.spell(m.direction)) ?? "",
  channel: (m && wire.channel.spell(m.channel)) ?? "",
  channel_used: (m?.channelUsed && wire.channel.spell(m.channelUsed)) ?? null,
  fallback: (m?.fallback && wire.channel.spell(m.fallback)) ?? null,
  fallback_applied: m?.fallbackApplied ?? false,
  status: (m && wire.messageStatus.spell(m.status)) ?? "",
  to: m?.to ?? "",
  from: m?.from ?? "",
  body: m?.body ?? "",
  media_urls: m?.mediaUrls ?? [],
  encoding: (m && wire.encoding.spell(m.encoding)) ?? "",
  segments: m?.segments ?? 0,
  template_id: m?.templateId ?? null,
  template_version: m?.templateVersion ?? null,
  consent_id: m?.consentId ?? null,
  expires_at: m?.expiresAt ?? null,
  error_code: m?.errorCode ?? null,
  error_message: m?.errorMessage ?? null,
  in_reply_to: m?.inReplyTo ?? null,
  keyword: m?.keyword ?? null,
  auto_reply_id: m?.autoReplyId ?? null,
  created_at: m?.createdAt ?? "",
  updated_at: m?.updatedAt ?? "",
  sent_at: m?.sentAt ?? null,
  delivered_at: m?.deliveredAt ?? null,
  read_at: m?.readAt ?? null,
  status_callback: m?.statusCallback
    ? { url: m.statusCallback.url, events: m.statusCallback.events }
    : null,
});

export const toTemplateJson = (t: messaging.Template | undefined) => ({
  id: t?.id ?? "",
  name: t?.name ?? "",
  version: t?.version ?? 0,
  latest_version: t?.latestVersion ?? 0,
  channels: spellChannels(t?.channels),
  body: t?.body ?? "",
  variables: t?.variables ?? [],
  status: (t && wire.templateStatus.spell(t.status)) ?? "",
  content_sha256: t?.contentSha256 ?? "",
  signature: t?.signature ?? "",
  kid: t?.kid ?? "",
  created_at: t?.createdAt ?? "",
  approved_at: t?.approvedAt ?? "",
});

export const toConsentJson = (c: messaging.Consent | undefined) => ({
  id: c?.id ?? "",
  phone_number: c?.phoneNumber ?? "",
  channels: spellChannels(c?.channels),
  source: (c && wire.consentSource.spell(c.source)) ?? "",
  evidence: c?.evidenceJson ? (JSON.parse(c.evidenceJson) as Record<string, unknown>) : null,
  captured_at: c?.capturedAt ?? "",
  status: (c && wire.consentStatus.spell(c.status)) ?? "",
  created_at: c?.createdAt ?? "",
  revoked_at: c?.revokedAt ?? null,
  revocation_source:
    (c?.revocationSource && wire.revocationSource.spell(c.revocationSource)) ?? null,
  revocation_keyword: c?.revocationKeyword ?? null,
});

export const toSettingsJson = (s: messaging.Settings | undefined) => ({
  help_text: s?.helpText ?? "",
  stop_reply_text: s?.stopReplyText ?? "",
  start_reply_text: s?.startReplyText ?? "",
  updated_at: s?.updatedAt ?? null,
});
