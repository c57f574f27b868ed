import { wire } from "@switchboard/proto";
import { z } from "zod";
import {
  cursorParam,
  e164,
  idOf,
  limitParam,
  page,
  resourceId,
  statusCallback,
  statusCallbackRequest,
  timestamp,
} from "./common.js";

export const messageChannels = wire.channel.values;
export const messageStatuses = wire.messageStatus.values;
/** The channels rcs may fall back to. */
const fallbackChannels = ["sms", "mms"] as const satisfies wire.ChannelValue[];

const channel = z.enum(messageChannels);
const direction = z.enum(wire.messageDirection.values);
const httpsUrl = z
  .string()
  .max(2_048, "must be at most 2048 characters")
  .refine((value) => {
    try {
      return new URL(value).protocol === "https:";
    } catch {
      return false;
    }
  }, "must be an https URL");

const variableValue = z
  .union([z.string().max(1_600), z.number()])
  .transform((value) => String(value));

export const sendRequest = z
  .object({
    channel,
    to: e164,
    from: z
      .string()
      .min(1)
      .max(64)
      .describe(
        "One of the account's numbers, E.164 or its num_ id, with the channel's capability",
      ),
    template_id: idOf("tpl"),
    template_version: z
      .number()
      .int()
      .min(1)
      .max(2_147_483_647)
      .optional()
      .describe("A version of the template; the latest when omitted"),
    variables: z
      .record(z.string().min(1).max(64), variableValue)
      .default({})
      .describe("Every {{name}} of the template version, and no other"),
    consent_id: idOf("cns"),
    media_urls: z
      .array(httpsUrl)
      .max(10, "must hold at most 10 URLs")
      .default([])
      .describe("mms (required, 1–10) and rcs (0–10) only; https URLs"),
    fallback: z
      .enum(fallbackChannels)
      .nullable()
      .optional()
      .describe(
        "rcs only: the channel used when the recipient is not RCS-capable (media need mms)",
      ),
    ttl_seconds: z
      .number()
      .int()
      .min(1)
      .max(36_000)
      .optional()
      .describe(
        "Seconds the message may wait to be handed to the carrier before it expires (default 36000)",
      ),
    status_callback: statusCallbackRequest("message").optional(),
  })
  .strict()
  .meta({ id: "SendMessageRequest" });

export const message = z
  .object({
    id: resourceId("msg"),
    direction,
    channel: channel.describe("The channel requested (outbound) or received on (inbound)"),
    channel_used: channel
      .nullable()
      .describe(
        "The channel the message went out on once decided; differs from channel after an RCS fallback",
      ),
    fallback: z.enum(fallbackChannels).nullable(),
    fallback_applied: z.boolean(),
    status: z.enum(messageStatuses),
    to: e164,
    from: e164,
    body: z.string().describe("The rendered text"),
    media_urls: z.array(z.string()),
    encoding: z.enum(wire.encoding.values),
    segments: z
      .number()
      .int()
      .min(1)
      .describe(
        "SMS segments (GSM-7 160/153, UCS-2 70/67 per segment); 1 for MMS and RCS, which travel whole",
      ),
    template_id: resourceId("tpl").nullable(),
    template_version: z.number().int().nullable(),
    consent_id: resourceId("cns").nullable(),
    expires_at: timestamp.nullable(),
    error_code: z.string().nullable(),
    error_message: z.string().nullable(),
    in_reply_to: z.string().nullable().describe("Auto-replies: the inbound message answered"),
    keyword: z.string().nullable().describe("Inbound: the keyword recognised (stop, start, help…)"),
    auto_reply_id: resourceId("msg").nullable().describe("Inbound: the auto-reply sent in answer"),
    created_at: timestamp,
    updated_at: timestamp,
    sent_at: timestamp.nullable(),
    delivered_at: timestamp.nullable(),
    read_at: timestamp.nullable(),
    status_callback: statusCallback,
  })
  .meta({ id: "Message" });

export const messagesPage = page(message).meta({ id: "MessagePage" });

export const messageListQuery = z
  .object({
    direction: direction.optional(),
    status: z.enum(messageStatuses).optional(),
    to: e164.optional(),
    from: e164.optional(),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const sandboxInboundRequest = z
  .object({
    from: e164.describe("The sender on the network"),
    to: e164.describe("One of the account's numbers with the sms capability"),
    body: z.string().min(1).max(1_600),
  })
  .strict()
  .meta({ id: "SandboxInboundMessage" });

export const templateRequest = z
  .object({
    name: z.string().min(1).max(100).describe("Unique per account"),
    channels: z.array(channel).min(1).max(3),
    body: z.string().min(1).max(1_600).describe("Text with {{variable}} placeholders"),
  })
  .strict()
  .meta({ id: "CreateTemplateRequest" });

export const templateVersionRequest = z
  .object({
    channels: z.array(channel).min(1).max(3).optional().describe("Default: the previous version's"),
    body: z.string().min(1).max(1_600),
  })
  .strict()
  .meta({ id: "CreateTemplateVersionRequest" });

export const template = z
  .object({
    id: resourceId("tpl"),
    name: z.string(),
    version: z.number().int().min(1),
    latest_version: z.number().int().min(1),
    channels: z.array(channel),
    body: z.string(),
    variables: z.array(z.string()).describe("The {{names}} of the body, in order of first use"),
    status: z.enum(wire.templateStatus.values),
    content_sha256: z
      .string()
      .describe("Hex SHA-256 of the RFC 8785 canonical JSON {body, channels, name, version}"),
    signature: z
      .string()
      .describe(
        "Compact JWS (EdDSA, kid in /.well-known/jwks.json) whose payload is that canonical JSON",
      ),
    kid: z.string(),
    created_at: timestamp.describe("When the template was created"),
    approved_at: timestamp.describe("When this version was approved and signed"),
  })
  .meta({ id: "Template" });

export const templatesPage = page(template).meta({ id: "TemplatePage" });

export const templateQuery = z
  .object({
    version: z.coerce
      .number()
      .int()
      .min(1)
      .max(2_147_483_647)
      .optional()
      .describe("A version; the latest when omitted"),
  })
  .strict();

export const pageQuery = z.object({ limit: limitParam, cursor: cursorParam }).strict();

export const consentSources = wire.consentSource.values;
const consentStatus = z.enum(wire.consentStatus.values);

export const consentRequest = z
  .object({
    phone_number: e164,
    channels: z.array(channel).min(1).max(3),
    source: z.enum(consentSources),
    evidence: z
      // A key longer than the object's 4 KiB cannot be valid: maxLength only documents it.
      .record(z.string().meta({ maxLength: 4096 }), z.unknown())
      .nullable()
      .optional()
      .describe(
        "How the consent was captured (form URL, IP, recording…); a JSON object up to 4 KiB",
      ),
    captured_at: z.iso
      .datetime({
        offset: true,
        message: "must be an RFC 3339 date-time such as 2026-11-21T00:00:00Z",
      })
      .max(64)
      .optional()
      .describe("When the consent was given; now when omitted"),
  })
  .strict()
  .meta({ id: "CreateConsentRequest" });

export const consent = z
  .object({
    id: resourceId("cns"),
    phone_number: e164,
    channels: z.array(channel),
    source: z.enum(consentSources),
    evidence: z.record(z.string(), z.unknown()).nullable(),
    captured_at: timestamp,
    status: consentStatus,
    created_at: timestamp,
    revoked_at: timestamp.nullable(),
    revocation_source: z.enum(wire.revocationSource.values).nullable(),
    revocation_keyword: z.string().nullable(),
  })
  .meta({ id: "Consent" });

export const consentsPage = page(consent).meta({ id: "ConsentPage" });

export const consentListQuery = z
  .object({
    phone_number: e164.optional().describe("Only this recipient's consents"),
    status: consentStatus.optional(),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const messagingSettings = z
  .object({
    help_text: z.string().describe("The answer to HELP"),
    stop_reply_text: z.string().describe("The confirmation of STOP and its synonyms"),
    start_reply_text: z.string().describe("The confirmation of START/UNSTOP"),
    updated_at: timestamp.nullable(),
  })
  .meta({ id: "MessagingSettings" });

const replyText = z
  .string()
  .max(320)
  .optional()
  .describe("At most 320 characters; empty restores the default");

export const settingsPatch = z
  .object({ help_text: replyText, stop_reply_text: replyText, start_reply_text: replyText })
  .strict()
  .meta({ id: "MessagingSettingsPatch" });
