import { wire } from "@switchboard/proto";
import { idParam } from "../schemas/common.js";
import { consent, consentListQuery, consentRequest, consentsPage } from "../schemas/messages.js";
import { created, ok, pageReply } from "./replies.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toConsentJson } from "./views/messages.js";
import { story, storyConsent } from "../schemas/story.js";

const consentPath = idParam("cns", "consent_id");

/** Consents (all under consents:write, as docs/api.md lists them). */
export const consentRoutes: RouteSpec[] = [
  defineRoute({
    method: "post",
    path: "/api/consents",
    operationId: "createConsent",
    examples: {
      request: {
        phone_number: story.recipient,
        channels: ["sms"],
        source: "web_form",
        evidence: { form_url: "https://example.com/reminders/signup", ip: "203.0.113.7" },
      },
    },
    summary: "Record a recipient's consent",
    description:
      "A granted consent for the channels named. It does not lift an opt-out: a recipient who texted STOP is refused here (422 recipient-opted-out) and messaged again only after their START or UNSTOP (as carriers enforce it), which grants a consent of its own.",
    tag: "Consents",
    scope: "consents:write",
    body: consentRequest,
    success: { status: 201, description: "The consent", schema: consent, headers: ["Location"] },
    problems: ["validation-failed", "recipient-opted-out"],
    handler: async (ctx) => {
      const b = ctx.body;
      const response = await ctx.rpc.messaging((c) => c.createConsent, {
        phoneNumber: b.phone_number,
        channels: b.channels.map(wire.channel.of),
        source: wire.consentSource.of(b.source),
        evidenceJson: b.evidence ? JSON.stringify(b.evidence) : "",
        capturedAt: b.captured_at,
      });
      const body = toConsentJson(response.consent);
      return created(`/v1/api/consents/${body.id}`, body);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/consents",
    operationId: "listConsents",
    summary: "List consents",
    description: "Newest first; `phone_number` narrows to one recipient.",
    tag: "Consents",
    scope: "consents:write",
    query: consentListQuery,
    paginated: true,
    success: { status: 200, description: "A page of consents", schema: consentsPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const q = ctx.query;
      const response = await ctx.rpc.messaging((c) => c.listConsents, {
        phoneNumber: q.phone_number,
        status: q.status && wire.consentStatus.of(q.status),
        limit: q.limit,
        cursor: q.cursor ?? "",
      });
      return pageReply(ctx.req, response.consents.map(toConsentJson), response.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/consents/{consent_id}",
    operationId: "getConsent",
    summary: "Get a consent",
    description:
      "One consent of the account: recipient, channels, source, evidence, status and, once revoked, how (API or keyword).",
    tag: "Consents",
    scope: "consents:write",
    params: consentPath,
    success: { status: 200, description: "The consent", schema: consent },
    problems: ["not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.messaging((c) => c.getConsent, {
        consentId: ctx.params.consent_id,
      });
      return ok(toConsentJson(response.consent));
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/consents/{consent_id}/revoke",
    operationId: "revokeConsent",
    examples: {
      response: {
        ...storyConsent,
        status: "revoked",
        revoked_at: "2026-11-25T08:12:00.000Z",
        revocation_source: "api",
      },
    },
    summary: "Revoke a consent",
    description:
      "granted → revoked (consent.revoked). Revoking a revoked consent is 409 invalid-state.",
    tag: "Consents",
    scope: "consents:write",
    params: consentPath,
    success: { status: 200, description: "The revoked consent", schema: consent },
    problems: ["not-found", "invalid-state"],
    handler: async (ctx) => {
      const response = await ctx.rpc.messaging((c) => c.revokeConsent, {
        consentId: ctx.params.consent_id,
      });
      return ok(toConsentJson(response.consent));
    },
  }),
];
