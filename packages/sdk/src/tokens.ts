/** Client credentials and how to reach the token endpoint. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Space-separated permissions; none: every scope the client holds. */
  scope?: string;
}

/** Fetches an access token with client_secret_basic and refreshes it before it expires. */
export function tokenSource(
  baseUrl: string,
  credentials: ClientCredentials,
  fetcher: typeof fetch = fetch,
): () => Promise<string> {
  let current: { token: string; refreshAt: number } | undefined;
  let pending: Promise<string> | undefined;
  const basic = Buffer.from(
    `${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.clientSecret)}`,
  ).toString("base64");
  const fetchToken = async () => {
    const body = new URLSearchParams({ grant_type: "client_credentials" });
    if (credentials.scope) body.set("scope", credentials.scope);
    const response = await fetcher(`${baseUrl}/oauth/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${basic}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body,
    });
    const json = (await response.json()) as {
      access_token?: string;
      expires_in?: number;
      error?: string;
      error_description?: string;
    };
    if (!response.ok || !json.access_token) {
      throw new Error(
        `token request failed: ${json.error ?? response.status} ${json.error_description ?? ""}`,
      );
    }
    // Refresh at 80 % of the lifetime: never send a token about to expire.
    current = {
      token: json.access_token,
      refreshAt: Date.now() + (json.expires_in ?? 60) * 800,
    };
    return json.access_token;
  };
  return async () => {
    if (current && Date.now() < current.refreshAt) return current.token;
    pending ??= fetchToken().finally(() => (pending = undefined));
    return pending;
  };
}
