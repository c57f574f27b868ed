import { wire } from "@switchboard/proto";
import { idParam } from "../schemas/common.js";
import { createdWindowRpc } from "../schemas/created-window.js";
import {
  message,
  messageListQuery,
  messagesPage,
  messagingSettings,
  sandboxInboundRequest,
  sendRequest,
  settingsPatch,
} from "../schemas/messages.js";
import { consentRoutes } from "./message-consents.js";
import { templateRoutes } from "./message-templates.js";
import { created, ok, pageReply } from "./replies.js";
import { checkedStatusCallback, statusCallbackDescription } from "./status-callback.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toMessageJson, toSettingsJson } from "./views/messages.js";
import { story, storyMessage } from "../schemas/story.js";

/** Messages, templates, consents, the messaging settings and the sandbox inbound route. */
export const messageRoutes: RouteSpec[] = [
  defineRoute({
    method: "post",
    path: "/api/messages/send",
    operationId: "sendMessage",
    examples: {
      request: {
        channel: "sms",
        to: story.recipient,
        from: story.ours,
        template_id: story.templateId,
        variables: { name: "Dana", day: "Tuesday", time: "10:00" },
        consent_id: story.consentId,
      },
      response: {
        ...storyMessage,
        status: "queued",
        channel_used: null,
        updated_at: storyMessage.created_at,
        sent_at: null,
        delivered_at: null,
      },
    },
    summary: "Send an SMS, MMS or RCS message from a signed template",
    description: [
      "Checks, each with its own problem: the template exists, is approved and still matches its signature (422 template-signature-invalid); every variable is supplied and no other (422 validation-failed, #/variables/<name>); the rendered body is at most 1600 characters (#/variables); media: mms needs 1–10, rcs 0–10, sms none, https only (#/media_urls/<i>); `from` is the account's number with the channel's capability (#/from; the fallback channel's too, #/fallback); the recipient has not opted out by STOP (422 recipient-opted-out, checked first: only their START lifts it); the consent is the account's, given by `to`, covers the channel (and the fallback) and is granted (422 consent-required); the platform's carrier can send on the channel, or on the fallback (422 channel-unavailable: the `smpp` carrier sends SMS only, so an RCS message goes as SMS when its `fallback` is `sms` and MMS is refused).",
      "Accepted messages are queued (202) and sent through a queue paced per sending number; carrier errors retry with backoff and a message is never sent twice. `segments` counts SMS segments exactly (GSM-7 160/153 with extension characters counting two, UCS-2 70/67 as soon as one character is outside GSM-7); MMS and RCS count 1. RCS to a recipient that is not RCS-capable falls back to `fallback` (recorded as channel_used and fallback_applied) or fails. `ttl_seconds` (default 36000): a message not handed to the carrier by then expires.",
      "Idempotency-Key is also stored with the message (unique per account): one key sends one message even if the gateway's key store is lost.",
      statusCallbackDescription("message"),
    ].join("\n\n"),
    tag: "Messages",
    scope: "messages:write",
    body: sendRequest,
    success: {
      status: 202,
      description: "The queued message",
      schema: message,
      headers: ["Location"],
    },
    problems: [
      "validation-failed",
      "unsafe-webhook-url",
      "template-signature-invalid",
      "consent-required",
      "recipient-opted-out",
      "channel-unavailable",
      "invalid-idempotency-key",
      "idempotency-mismatch",
    ],
    handler: async (ctx) => {
      const b = ctx.body;
      const statusCallback = await checkedStatusCallback(ctx.rpc, b.status_callback, "message");
      const response = await ctx.rpc.messaging((c) => c.sendMessage, {
        channel: wire.channel.of(b.channel),
        to: b.to,
        from: b.from,
        templateId: b.template_id,
        templateVersion: b.template_version,
        variables: b.variables,
        consentId: b.consent_id,
        mediaUrls: b.media_urls,
        fallback: b.fallback ? wire.channel.of(b.fallback) : undefined,
        ttlSeconds: b.ttl_seconds,
        statusCallback,
      });
      const body = toMessageJson(response.message);
      return { status: 202, body, headers: { Location: `/v1/api/messages/${body.id}` } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/messages",
    operationId: "listMessages",
    summary: "List the account's messages",
    description:
      "Outbound and inbound, newest first by created_at (then id), or oldest first with `sort=created_at`; the filters (`direction`, `status`, `to`, `from`, `created_after`, `created_before`) combine. Keyset-paginated: a walk through the pages in either order neither skips nor repeats a message; the cursor is bound to the filters and the order.",
    tag: "Messages",
    scope: "messages:read",
    query: messageListQuery,
    paginated: true,
    success: { status: 200, description: "A page of messages", schema: messagesPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const q = ctx.query;
      const response = await ctx.rpc.messaging((c) => c.listMessages, {
        direction: q.direction && wire.messageDirection.of(q.direction),
        status: q.status && wire.messageStatus.of(q.status),
        to: q.to,
        from: q.from,
        ...createdWindowRpc(q),
        limit: q.limit,
        cursor: q.cursor ?? "",
      });
      return pageReply(ctx.req, response.messages.map(toMessageJson), response.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/messages/{message_id}",
    operationId: "getMessage",
    summary: "Get a message",
    description:
      "States: queued → sending → sent → delivered | undelivered | failed | expired; RCS may be read; inbound messages are received. Terminal states never change.",
    tag: "Messages",
    scope: "messages:read",
    params: idParam("msg", "message_id"),
    success: { status: 200, description: "The message", schema: message },
    problems: ["not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.messaging((c) => c.getMessage, {
        messageId: ctx.params.message_id,
      });
      return ok(toMessageJson(response.message));
    },
  }),
  ...templateRoutes,
  ...consentRoutes,
  defineRoute({
    method: "get",
    path: "/api/messaging/settings",
    operationId: "getMessagingSettings",
    summary: "The account's keyword replies",
    description:
      "The texts sent in answer to HELP, STOP (and synonyms) and START/UNSTOP; the platform's defaults until set.",
    tag: "Messages",
    scope: "messages:read",
    success: { status: 200, description: "The settings", schema: messagingSettings },
    problems: [],
    handler: async (ctx) => {
      const response = await ctx.rpc.messaging((c) => c.getSettings, {});
      return ok(toSettingsJson(response.settings));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/api/messaging/settings",
    operationId: "updateMessagingSettings",
    summary: "Set the account's keyword replies",
    description: "Sets the texts given; an empty string restores the platform's default.",
    tag: "Messages",
    scope: "messages:write",
    body: settingsPatch,
    success: { status: 200, description: "The settings", schema: messagingSettings },
    problems: ["validation-failed"],
    handler: async (ctx) => {
      const b = ctx.body;
      const response = await ctx.rpc.messaging((c) => c.updateSettings, {
        helpText: b.help_text,
        stopReplyText: b.stop_reply_text,
        startReplyText: b.start_reply_text,
      });
      return ok(toSettingsJson(response.settings));
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/sandbox/messages/inbound",
    operationId: "receiveSandboxMessage",
    summary: "Sandbox: the network delivers an inbound message",
    description:
      "Exists only while the sandbox carrier is active (404 otherwise). `to` must be the account's number with sms. The whole trimmed body, case-insensitive, is a keyword: STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT revoke the sender's consents for the account and opt them out; START, UNSTOP opt them back in with a new consent (source keyword); HELP, INFO are answered with the account's help text. Each keyword is confirmed by an auto-reply (auto_reply_id).",
    tag: "Sandbox",
    scope: "messages:write",
    body: sandboxInboundRequest,
    examples: {
      request: { from: story.recipient, to: story.ours, body: "Can we make it 11:00 instead?" },
      response: {
        ...storyMessage,
        id: "msg_01jd3m2n3p4q5r6s7t8v9w0x1y",
        direction: "inbound",
        status: "received",
        to: story.ours,
        from: story.recipient,
        body: "Can we make it 11:00 instead?",
        template_id: null,
        template_version: null,
        consent_id: null,
        expires_at: null,
        created_at: "2026-11-25T08:12:00.000Z",
        updated_at: "2026-11-25T08:12:00.000Z",
        sent_at: null,
        delivered_at: null,
      },
    },
    success: {
      status: 201,
      description: "The received message",
      schema: message,
      headers: ["Location"],
    },
    problems: ["validation-failed", "not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.messaging((c) => c.receiveSandboxMessage, {
        from: ctx.body.from,
        to: ctx.body.to,
        body: ctx.body.body,
      });
      const body = toMessageJson(response.message);
      return created(`/v1/api/messages/${body.id}`, body);
    },
  }),
];
