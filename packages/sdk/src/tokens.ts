import createClient from "openapi-fetch";
import { problemFrom, SwitchboardProblem } from "./problems.js";
import type { components, paths } from "./schema.js";

/** Client credentials and how to reach the token endpoint. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Space-separated permissions; none: every scope the client holds. */
  scope?: string;
}

type TokenRequest = components["schemas"]["IssueTokenRequest"];
type OAuthError = components["schemas"]["OAuthError"];

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic. */
const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");

const isOAuthError = (body: unknown): body is OAuthError =>
  typeof body === "object" && body !== null && typeof (body as OAuthError).error === "string";

/**
 * A refused token request as a problem: the RFC 6749 error in kebab case (`invalid-client`: a
 * wrong id or secret; `invalid-scope`; `invalid-request`), `client-locked` when invalid_client
 * comes with Retry-After (too many wrong secrets: wait that long). A problem+json reply (503
 * service-unavailable, 429 rate-limited) is raised as it is.
 */
function tokenProblem(body: unknown, response: Response): SwitchboardProblem {
  if (!isOAuthError(body)) return problemFrom(body, response);
  const locked = body.error === "invalid_client" && response.headers.has("retry-after");
  const code = locked ? "CLIENT_LOCKED" : body.error.toUpperCase();
  const detail = locked
    ? `${body.error_description ?? "client authentication failed"}; this client id is locked for ${response.headers.get("retry-after")} s after repeated failures`
    : (body.error_description ?? body.error);
  return new SwitchboardProblem(
    {
      type: "about:blank",
      title: locked ? "Client locked" : "Token request refused",
      status: response.status,
      code,
      detail,
      instance: "",
      oauth_error: body.error,
    },
    response,
  );
}

/**
 * Fetches an access token (client_credentials, client_secret_basic) through the typed client of
 * `POST /oauth/token`, and refreshes it before it expires. Concurrent callers share one request.
 * A refused request raises a SwitchboardProblem (see tokenProblem).
 */
export function tokenSource(
  baseUrl: string,
  credentials: ClientCredentials,
  fetcher: (request: Request) => Promise<Response> = (request) => fetch(request),
): () => Promise<string> {
  const oauth = createClient<paths>({ baseUrl, fetch: fetcher });
  let current: { token: string; refreshAt: number } | undefined;
  let pending: Promise<string> | undefined;
  // Both halves are percent-encoded ASCII, so btoa (browsers, edge runtimes, Node) suffices.
  const basic = btoa(`${formEncode(credentials.clientId)}:${formEncode(credentials.clientSecret)}`);
  const fetchToken = async () => {
    const body: TokenRequest = {
      grant_type: "client_credentials",
      ...(credentials.scope ? { scope: credentials.scope } : {}),
    };
    const { data, error, response } = await oauth.POST("/oauth/token", {
      body,
      bodySerializer: (form) => new URLSearchParams(form as Record<string, string>).toString(),
      headers: {
        Authorization: `Basic ${basic}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
    });
    if (!data) throw tokenProblem(error, response);
    // Refresh at 80 % of the lifetime: never send a token about to expire.
    current = { token: data.access_token, refreshAt: Date.now() + data.expires_in * 800 };
    return data.access_token;
  };
  return async () => {
    if (current && Date.now() < current.refreshAt) return current.token;
    pending ??= fetchToken().finally(() => (pending = undefined));
    return pending;
  };
}
