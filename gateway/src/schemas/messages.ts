import { wire } from "@switchboard/proto";
import { z } from "zod";
import { createdWindowQuery } from "./created-window.js";
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
  text,
} from "./common.js";
import { story, storyConsent, storyMessage, storyTemplate } from "./story.js";

export const messageChannels = wire.channel.values;
const templateBody =
  "Hi {{name}}, your appointment is on {{day}} at {{time}}. Reply STOP to opt out.";
const helpText = "Acme Clinic reminders. Reply STOP to opt out. Help: support@example.com";
const stopText = "You will no longer receive messages from Acme Clinic. Reply START to resume.";
const startText = "You will receive Acme Clinic reminders again. Reply STOP to opt out.";
export const messageStatuses = wire.messageStatus.values;
/** The channels rcs may fall back to. */
const fallbackChannels = ["sms", "mms"] as const satisfies wire.ChannelValue[];

const channel = z.enum(messageChannels);
const direction = z
  .enum(wire.messageDirection.values)
  .describe("outbound: sent by the account; inbound: received on one of its numbers");
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
    channel: channel.describe("sms, mms or rcs"),
    to: e164.describe("The recipient").meta({ examples: [story.recipient] }),
    from: z
      .string()
      .min(1)
      .max(64)
      .describe("One of the account's numbers, E.164 or its num_ id, with the channel's capability")
      .meta({ examples: [story.ours] }),
    template_id: idOf("tpl").describe("The template whose version is rendered and sent"),
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
    consent_id: idOf("cns").describe(
      "A granted consent of the account that covers `to` and the channel",
    ),
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
    fallback: z
      .enum(fallbackChannels)
      .nullable()
      .describe("rcs: the channel to fall back to, as requested; null when none"),
    fallback_applied: z.boolean().describe("The message went out on its fallback channel"),
    status: z
      .enum(messageStatuses)
      .describe(
        "queued → sending → sent → delivered | undelivered | failed | expired; read (RCS); received (inbound)",
      ),
    to: e164.describe("The recipient (outbound) or the account's number (inbound)"),
    from: e164.describe("The account's number (outbound) or the sender (inbound)"),
    body: text("The rendered text", storyMessage.body),
    media_urls: z.array(z.string()).describe("mms and rcs: the media sent with the text"),
    encoding: z
      .enum(wire.encoding.values)
      .describe("GSM-7 or UCS-2: decides how many characters fit in a segment"),
    segments: z
      .number()
      .int()
      .min(1)
      .describe(
        "SMS segments (GSM-7 160/153, UCS-2 70/67 per segment); 1 for MMS and RCS, which travel whole",
      ),
    template_id: resourceId("tpl").nullable().describe("The template sent; null for inbound"),
    template_version: z.number().int().nullable().describe("The template version sent"),
    consent_id: resourceId("cns").nullable().describe("The consent the send relied on"),
    expires_at: timestamp
      .nullable()
      .describe("Outbound: when it expires unless handed to the carrier by then"),
    error_code: z
      .string()
      .nullable()
      .describe("Why it failed or was undelivered, as a code; null otherwise")
      .meta({ examples: ["carrier_rejected"] }),
    error_message: z
      .string()
      .nullable()
      .describe("The failure in words; null otherwise")
      .meta({ examples: ["The carrier refused the destination"] }),
    in_reply_to: z
      .string()
      .nullable()
      .describe("Auto-replies: the inbound message answered")
      .meta({ examples: [story.messageId] }),
    keyword: z
      .string()
      .nullable()
      .describe("Inbound: the keyword recognised (stop, start, help…)")
      .meta({ examples: ["stop"] }),
    auto_reply_id: resourceId("msg").nullable().describe("Inbound: the auto-reply sent in answer"),
    created_at: timestamp.describe("When the message was accepted or received"),
    updated_at: timestamp.describe("When its status last changed"),
    sent_at: timestamp.nullable().describe("When the carrier accepted it"),
    delivered_at: timestamp.nullable().describe("When the handset confirmed it"),
    read_at: timestamp.nullable().describe("RCS: when the recipient read it"),
    status_callback: statusCallback,
  })
  .meta({ id: "Message", examples: [storyMessage] });

export const messagesPage = page(message).meta({ id: "MessagePage" });

export const messageListQuery = z
  .object({
    direction: direction.optional().describe("Only messages in this direction"),
    status: z.enum(messageStatuses).optional().describe("Only messages in this status"),
    to: e164.optional().describe("Only messages to this number"),
    from: e164.optional().describe("Only messages from this number"),
    ...createdWindowQuery,
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const sandboxInboundRequest = z
  .object({
    from: e164.describe("The sender on the network"),
    to: e164.describe("One of the account's numbers with the sms capability"),
    body: z
      .string()
      .min(1)
      .max(1_600)
      .describe("The text the sender typed")
      .meta({ examples: ["STOP"] }),
  })
  .strict()
  .meta({ id: "SandboxInboundMessage" });

export const templateRequest = z
  .object({
    name: z
      .string()
      .min(1)
      .max(100)
      .describe("Unique per account")
      .meta({ examples: ["appointment-reminder"] }),
    channels: z.array(channel).min(1).max(3).describe("The channels it may be sent on"),
    body: z
      .string()
      .min(1)
      .max(1_600)
      .describe("Text with {{variable}} placeholders")
      .meta({ examples: [templateBody] }),
  })
  .strict()
  .meta({ id: "CreateTemplateRequest" });

export const templateVersionRequest = z
  .object({
    channels: z.array(channel).min(1).max(3).optional().describe("Default: the previous version's"),
    body: z
      .string()
      .min(1)
      .max(1_600)
      .describe("The new version's text, with {{variable}} placeholders")
      .meta({ examples: [templateBody] }),
  })
  .strict()
  .meta({ id: "CreateTemplateVersionRequest" });

export const template = z
  .object({
    id: resourceId("tpl"),
    name: text("Unique per account", "appointment-reminder"),
    version: z.number().int().min(1).describe("The version shown"),
    latest_version: z.number().int().min(1).describe("The template's newest version"),
    channels: z.array(channel).describe("The channels this version may be sent on"),
    body: text("This version's text, with {{variable}} placeholders", templateBody),
    variables: z.array(z.string()).describe("The {{names}} of the body, in order of first use"),
    status: z.enum(wire.templateStatus.values).describe("approved: signed and usable in sends"),
    content_sha256: text(
      "Hex SHA-256 of the RFC 8785 canonical JSON {body, channels, name, version}",
      "9b1c6e0f2d4a8b7c5e3f1a0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b",
    ),
    signature: text(
      "Compact JWS (EdDSA, kid in /.well-known/jwks.json) whose payload is that canonical JSON",
      "eyJhbGciOiJFZERTQSIsImtpZCI6InRwbC1rZXktMSJ9..3q2-7wT0Yb0m6X1hP9sF4kLrN8cVzQ5aJ2uD7eG1iB0oH3yR6tW9xK4mE2nC8pS5vA1fZ0gU7jL3dQ6bY9hTCg",
    ),
    kid: text("The key that signed it, in /.well-known/jwks.json", "tpl-key-1"),
    created_at: timestamp.describe("When the template was created"),
    approved_at: timestamp.describe("When this version was approved and signed"),
  })
  .meta({ id: "Template", examples: [storyTemplate] });

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
    phone_number: e164.describe("The recipient who consented").meta({
      examples: [story.recipient],
    }),
    channels: z.array(channel).min(1).max(3).describe("The channels consented to"),
    source: z.enum(consentSources).describe("How it was captured"),
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
    phone_number: e164.describe("The recipient who consented").meta({
      examples: [story.recipient],
    }),
    channels: z.array(channel).describe("The channels consented to"),
    source: z.enum(consentSources).describe("How it was captured"),
    evidence: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe("How the consent was captured, as given"),
    captured_at: timestamp.describe("When the consent was given"),
    status: consentStatus.describe("granted, or revoked (by STOP or through the API)"),
    created_at: timestamp.describe("When it was recorded"),
    revoked_at: timestamp.nullable().describe("When it was revoked; null while granted"),
    revocation_source: z
      .enum(wire.revocationSource.values)
      .nullable()
      .describe("keyword: the recipient texted it; api: revoked through the API"),
    revocation_keyword: z
      .string()
      .nullable()
      .describe("The keyword that revoked it (stop, unsubscribe…)")
      .meta({ examples: ["stop"] }),
  })
  .meta({ id: "Consent", examples: [storyConsent] });

export const consentsPage = page(consent).meta({ id: "ConsentPage" });

export const consentListQuery = z
  .object({
    phone_number: e164.optional().describe("Only this recipient's consents"),
    status: consentStatus.optional().describe("Only consents in this status"),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const messagingSettings = z
  .object({
    help_text: text("The answer to HELP", helpText),
    stop_reply_text: text("The confirmation of STOP and its synonyms", stopText),
    start_reply_text: text("The confirmation of START/UNSTOP", startText),
    updated_at: timestamp.nullable().describe("When they were last changed; null: the defaults"),
  })
  .meta({ id: "MessagingSettings" });

const replyText = (example: string) =>
  z
    .string()
    .max(320)
    .optional()
    .describe("At most 320 characters; empty restores the default")
    .meta({ examples: [example] });

export const settingsPatch = z
  .object({
    help_text: replyText(helpText),
    stop_reply_text: replyText(stopText),
    start_reply_text: replyText(startText),
  })
  .strict()
  .meta({ id: "MessagingSettingsPatch" });
