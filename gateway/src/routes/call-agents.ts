import { idParam } from "../schemas/common.js";
import { created, noContent, ok, pageReply } from "./replies.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toAgent } from "./views/calls.js";
import {
  agent,
  agentCreate,
  agentsPage,
  agentUpdate,
  listQuery,
} from "../schemas/call-resources.js";
import { story } from "../schemas/story.js";

const agentPath = idParam("agt", "agent_id");

/** Agents: who handles calls, by a name unique per account (calls:read / calls:write). */
export const callAgentRoutes: RouteSpec[] = [
  defineRoute({
    method: "post",
    path: "/api/agents",
    operationId: "createAgent",
    examples: {
      request: { name: story.agent, description: "Answers the front desk line on weekdays" },
    },
    summary: "Create an agent",
    description: "Names are unique per account (409 conflict).",
    tag: "Agents",
    scope: "calls:write",
    body: agentCreate,
    success: { status: 201, description: "The agent", schema: agent, headers: ["Location"] },
    problems: ["validation-failed", "conflict"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.createAgent, {
        name: ctx.body.name,
        description: ctx.body.description ?? undefined,
      });
      const body = toAgent(r.agent);
      return created(`/v1/api/agents/${body.id}`, body);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/agents",
    operationId: "listAgents",
    summary: "List agents",
    description: "Newest first.",
    tag: "Agents",
    scope: "calls:read",
    query: listQuery,
    paginated: true,
    success: { status: 200, description: "A page of agents", schema: agentsPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.listAgents, {
        limit: ctx.query.limit,
        cursor: ctx.query.cursor ?? "",
      });
      return pageReply(ctx.req, r.agents.map(toAgent), r.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/agents/{agent_id}",
    operationId: "getAgent",
    summary: "Get an agent",
    description: "One agent of the account by id.",
    tag: "Agents",
    scope: "calls:read",
    params: agentPath,
    success: { status: 200, description: "The agent", schema: agent },
    problems: ["not-found"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.getAgent, { agentId: ctx.params.agent_id });
      return ok(toAgent(r.agent));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/api/agents/{agent_id}",
    operationId: "updateAgent",
    summary: "Update an agent",
    description:
      "Routes follow a renamed agent; calls keep the name they were placed or answered with.",
    tag: "Agents",
    scope: "calls:write",
    params: agentPath,
    body: agentUpdate,
    success: { status: 200, description: "The agent", schema: agent },
    problems: ["not-found", "validation-failed", "conflict"],
    handler: async (ctx) => {
      const description = ctx.body.description;
      const r = await ctx.rpc.callControl((c) => c.updateAgent, {
        agentId: ctx.params.agent_id,
        name: ctx.body.name,
        description: description === null ? "" : description,
      });
      return ok(toAgent(r.agent));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/api/agents/{agent_id}",
    operationId: "deleteAgent",
    summary: "Delete an agent",
    description: "409 conflict while a route uses the agent.",
    tag: "Agents",
    scope: "calls:write",
    params: agentPath,
    success: { status: 204, description: "Deleted" },
    problems: ["not-found", "conflict"],
    handler: async (ctx) => {
      await ctx.rpc.callControl((c) => c.deleteAgent, { agentId: ctx.params.agent_id });
      return noContent;
    },
  }),
];
