import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

/** Client credentials and how to reach the token endpoint. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Space-separated permissions; none: every scope the client holds. */
  scope?: string;
}

type TokenRequest = components["schemas"]["IssueTokenRequest"];

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic. */
const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");

/**
 * Fetches an access token (client_credentials, client_secret_basic) through the typed client of
 * `POST /oauth/token`, and refreshes it before it expires. Concurrent callers share one request.
 */
export function tokenSource(
  baseUrl: string,
  credentials: ClientCredentials,
  fetcher: (request: Request) => Promise<Response> = (request) => fetch(request),
): () => Promise<string> {
  const oauth = createClient<paths>({ baseUrl, fetch: fetcher });
  let current: { token: string; refreshAt: number } | undefined;
  let pending: Promise<string> | undefined;
  const basic = Buffer.from(
    `${formEncode(credentials.clientId)}:${formEncode(credentials.clientSecret)}`,
  ).toString("base64");
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
    if (!data) {
      const oauthError = error as { error?: string; error_description?: string; code?: string };
      throw new Error(
        `token request failed: ${response.status} ${oauthError?.error ?? oauthError?.code ?? ""} ${oauthError?.error_description ?? ""}`.trim(),
      );
    }
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
