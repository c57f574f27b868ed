import { randomUUID } from "node:crypto";
import createClient, { type Client, type Middleware } from "openapi-fetch";
import { retryingFetch } from "./retry.js";
import type { paths } from "./schema.js";
import { tokenSource, type ClientCredentials } from "./tokens.js";

export type { components, operations, paths } from "./schema.js";
export { paginate, type Page } from "./pages.js";
export { SwitchboardProblem, unwrap, type ProblemDetails } from "./problems.js";
export { retryAfterSeconds, retryingFetch } from "./retry.js";
export { tokenSource, type ClientCredentials } from "./tokens.js";
export { verifyWebhook, WebhookVerificationError } from "./webhooks.js";

export interface SwitchboardOptions extends ClientCredentials {
  /** The gateway's base URL, e.g. http://localhost:8080 (paths carry /v1). */
  baseUrl: string;
  /** Tries of a request answered 429 or 503 (Retry-After honoured); default 4. */
  attempts?: number;
  fetch?: typeof fetch;
}

export interface Switchboard {
  /** The typed client: `api.GET("/v1/api/numbers/search", {params: {query: …}})`. */
  api: Client<paths>;
  /** A current access token (fetched, and refreshed before it expires). */
  token(): Promise<string>;
}

const unsafe = new Set(["POST", "PATCH", "DELETE", "PUT"]);

/**
 * The Switchboard client: the generated types over openapi-fetch, with a bearer token from the
 * client credentials, an Idempotency-Key on every write that has none (so a retry never runs
 * twice), and retries of 429/503 as Retry-After says.
 */
export function createSwitchboard(options: SwitchboardOptions): Switchboard {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetcher = options.fetch ?? fetch;
  // Every request, the token's included, is retried on 429/503 as Retry-After says.
  const retrying = retryingFetch((request) => fetcher(request), {
    attempts: options.attempts ?? 4,
  });
  const token = tokenSource(baseUrl, options, retrying);
  const api = createClient<paths>({ baseUrl, fetch: retrying });
  const authenticate: Middleware = {
    async onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${await token()}`);
      if (unsafe.has(request.method) && !request.headers.has("Idempotency-Key")) {
        request.headers.set("Idempotency-Key", randomUUID());
      }
      return request;
    },
  };
  api.use(authenticate);
  return { api, token };
}
