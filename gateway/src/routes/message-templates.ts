import { wire } from "@switchboard/proto";
import { idParam } from "../schemas/common.js";
import {
  pageQuery,
  template,
  templateQuery,
  templateRequest,
  templatesPage,
  templateVersionRequest,
} from "../schemas/messages.js";
import { created, ok, pageReply } from "./replies.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toTemplateJson } from "./views/messages.js";
import { storyTemplate } from "../schemas/story.js";

const signedNote =
  "Each version is approved and signed by the platform on creation: content_sha256 is the hex SHA-256 of the RFC 8785 canonical JSON {body, channels, name, version}; signature is a compact JWS (EdDSA, kid published in /.well-known/jwks.json) whose payload is that JSON. Sending re-verifies it.";

const templatePath = idParam("tpl", "template_id");

/** Templates: versioned, immutable, signed (all under templates:write, as docs/api.md lists them). */
export const templateRoutes: RouteSpec[] = [
  defineRoute({
    method: "post",
    path: "/api/templates",
    operationId: "createTemplate",
    examples: {
      request: {
        name: "appointment-reminder",
        channels: ["sms"],
        body: "Hi {{name}}, your appointment is on {{day}} at {{time}}. Reply STOP to opt out.",
      },
    },
    summary: "Create a message template (version 1)",
    description: `Variables are written {{name}} (a letter or _, then letters, digits, _). Names are unique per account (409 conflict). ${signedNote}`,
    tag: "Templates",
    scope: "templates:write",
    body: templateRequest,
    success: {
      status: 201,
      description: "The template at version 1",
      schema: template,
      headers: ["Location"],
    },
    problems: ["validation-failed", "conflict"],
    handler: async (ctx) => {
      const response = await ctx.rpc.messaging((c) => c.createTemplate, {
        name: ctx.body.name,
        channels: ctx.body.channels.map(wire.channel.of),
        body: ctx.body.body,
      });
      const body = toTemplateJson(response.template);
      return created(`/v1/api/templates/${body.id}`, body);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/templates",
    operationId: "listTemplates",
    summary: "List the account's templates",
    description: "Each at its latest version, newest template first.",
    tag: "Templates",
    scope: "templates:write",
    query: pageQuery,
    paginated: true,
    success: { status: 200, description: "A page of templates", schema: templatesPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const response = await ctx.rpc.messaging((c) => c.listTemplates, {
        limit: ctx.query.limit,
        cursor: ctx.query.cursor ?? "",
      });
      return pageReply(ctx.req, response.templates.map(toTemplateJson), response.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/templates/{template_id}",
    operationId: "getTemplate",
    summary: "Get a template",
    description: "The latest version, or `?version=n`.",
    tag: "Templates",
    scope: "templates:write",
    params: templatePath,
    query: templateQuery,
    success: { status: 200, description: "The template version", schema: template },
    problems: ["not-found", "validation-failed"],
    handler: async (ctx) => {
      const response = await ctx.rpc.messaging((c) => c.getTemplate, {
        templateId: ctx.params.template_id,
        version: ctx.query.version,
      });
      return ok(toTemplateJson(response.template));
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/templates/{template_id}/versions",
    operationId: "createTemplateVersion",
    examples: {
      response: {
        ...storyTemplate,
        version: 2,
        latest_version: 2,
        approved_at: "2026-11-25T09:00:00.000Z",
      },
    },
    summary: "Add a new immutable version",
    description: `Versions never change; sends name a version or get the latest. Channels default to the previous version's. ${signedNote}`,
    tag: "Templates",
    scope: "templates:write",
    params: templatePath,
    body: templateVersionRequest,
    success: {
      status: 201,
      description: "The new version",
      schema: template,
      headers: ["Location"],
    },
    problems: ["not-found", "validation-failed"],
    handler: async (ctx) => {
      const response = await ctx.rpc.messaging((c) => c.createTemplateVersion, {
        templateId: ctx.params.template_id,
        channels: (ctx.body.channels ?? []).map(wire.channel.of),
        body: ctx.body.body,
      });
      const body = toTemplateJson(response.template);
      return created(`/v1/api/templates/${body.id}?version=${body.version}`, body);
    },
  }),
];
