import type { RouteSpec } from "../http/route-spec.js";
import { responseHeader } from "./headers.js";

/** The token endpoint answers its own errors as RFC 6749 §5.2 JSON, not problem+json. */
export const isTokenEndpoint = (route: RouteSpec): boolean => route.path === "/oauth/token";

export const oauthErrorSchema = {
  type: "object",
  description: "RFC 6749 §5.2 error response of the token endpoint",
  required: ["error"],
  properties: {
    error: {
      type: "string",
      enum: ["invalid_request", "invalid_client", "invalid_scope", "unsupported_grant_type"],
      description: "The RFC 6749 error code",
    },
    error_description: {
      type: "string",
      description: "What went wrong, in words",
      examples: ["the client could not be authenticated"],
    },
  },
};

const oauthContent = (example: { error: string; error_description: string }) => ({
  "application/json": { schema: { $ref: "#/components/schemas/OAuthError" }, example },
});

/**
 * Adds the token endpoint's RFC 6749 errors to its problem responses: 400 (invalid_request,
 * invalid_scope, unsupported_grant_type) beside the problem+json 400, and 401 invalid_client
 * with a Basic challenge.
 */
export function withOAuthErrors(
  responses: Record<string, Record<string, unknown>>,
  commonHeaders: (status: number) => string[],
): Record<string, Record<string, unknown>> {
  const badRequest = responses["400"];
  return {
    ...responses,
    "400": {
      description: `OAuth error (invalid_request, invalid_scope, unsupported_grant_type)${badRequest ? ` or ${String(badRequest.description)}` : ""}`,
      // Cache-Control: no-store comes with the OAuth errors, not with a problem+json 400.
      headers: responseHeader(commonHeaders(400), ["Cache-Control"]),
      content: {
        ...oauthContent({
          error: "invalid_scope",
          error_description: "the client may not ask for scope admin",
        }),
        ...((badRequest?.content as object | undefined) ?? {}),
      },
      ...(badRequest?.["x-problem-kinds"]
        ? { "x-problem-kinds": badRequest["x-problem-kinds"] }
        : {}),
    },
    "401": {
      description: "OAuth error invalid_client (client authentication failed)",
      headers: responseHeader([...commonHeaders(401), "Cache-Control"]),
      content: oauthContent({
        error: "invalid_client",
        error_description: "the client could not be authenticated",
      }),
    },
  };
}
