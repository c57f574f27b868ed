/**
 * Reads the client's credentials from a token request: `client_secret_basic` (RFC 6749 §2.3.1,
 * id and secret form-urlencoded inside the Basic credentials) or `client_secret_post`
 * (`client_id` and `client_secret` in the body). Checks shape only; the secret is verified by
 * the client store.
 */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  method: "client_secret_basic" | "client_secret_post";
}

export type CredentialsResult =
  | { ok: true; credentials: ClientCredentials }
  | { ok: false; error: "invalid_request" | "invalid_client"; description: string };

const fail = (
  error: "invalid_request" | "invalid_client",
  description: string,
): CredentialsResult => ({ ok: false, error, description });

/** `application/x-www-form-urlencoded` decoding of one component (`+` is a space). */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

function parseBasic(header: string): CredentialsResult {
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) return fail("invalid_client", "the Basic client credentials are malformed");
  const decoded = Buffer.from(match[1] ?? "", "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return fail("invalid_client", "the Basic client credentials are malformed");
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  if (!clientId || clientSecret === undefined) {
    return fail("invalid_client", "the Basic client credentials are malformed");
  }
  return { ok: true, credentials: { clientId, clientSecret, method: "client_secret_basic" } };
}

export function readClientCredentials(
  authorization: string | undefined,
  form: { client_id?: string | undefined; client_secret?: string | undefined },
): CredentialsResult {
  const header = authorization?.trim();
  if (header) {
    if (!/^basic /i.test(header)) {
      return fail("invalid_client", "client authentication must use HTTP Basic or the form body");
    }
    if (form.client_secret !== undefined) {
      return fail("invalid_request", "use exactly one client authentication method, not two");
    }
    const basic = parseBasic(header);
    if (basic.ok && form.client_id !== undefined && form.client_id !== basic.credentials.clientId) {
      return fail("invalid_request", "client_id in the body differs from the Basic credentials");
    }
    return basic;
  }
  if (form.client_secret !== undefined && form.client_id === undefined) {
    return fail("invalid_request", "client_secret was sent without client_id");
  }
  if (form.client_id === undefined || form.client_secret === undefined || form.client_id === "") {
    return fail("invalid_client", "client authentication is required");
  }
  return {
    ok: true,
    credentials: {
      clientId: form.client_id,
      clientSecret: form.client_secret,
      method: "client_secret_post",
    },
  };
}
