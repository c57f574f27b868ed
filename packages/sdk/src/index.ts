import createClient, { type Client, type Middleware } from "openapi-fetch";
import { resources, type Resources } from "./resources.js";
import { retryingFetch } from "./retry.js";
import type { paths } from "./schema.js";
import { tokenSource, type ClientCredentials } from "./tokens.js";

export type { components, operations, paths } from "./schema.js";
export { paginate, pagesOf, PagedList, type Page } from "./pages.js";
export { problemFrom, SwitchboardProblem, unwrap, type ProblemDetails } from "./problems.js";
export { type Resources, type WriteOptions } from "./resources.js";
export { retryAfterSeconds, retryDelaySeconds, retryingFetch, type RetryOptions } from "./retry.js";
export { tokenSource, type ClientCredentials } from "./tokens.js";
export {
  recentWebhookIds,
  verifyWebhook,
  WebhookReplayError,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookEventType,
} from "./webhooks.js";

export interface SwitchboardOptions extends ClientCredentials {
  /** The gateway's base URL, e.g. http://localhost:8080 (a trailing /v1 is dropped: paths carry it). */
  baseUrl: string;
  /** Tries of a request answered 429 or 503 (Retry-After honoured, with jitter); default 4. */
  attempts?: number;
  fetch?: typeof fetch;
}

export interface Switchboard extends Resources {
  /** The typed client: `api.GET("/v1/api/numbers/search", {params: {query: …}})`. */
  api: Client<paths>;
  /** A current access token (fetched, and refreshed before it expires). */
  token(): Promise<string>;
}

const unsafe = new Set(["POST", "PATCH", "DELETE", "PUT"]);

/** A v4 UUID: crypto.randomUUID exists in secure contexts only, getRandomValues everywhere. */
function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The root the API's paths (`/v1/…`, `/oauth/token`) hang from: trailing slashes and a trailing
 * `/v1` go, so `https://host/v1` does not become `https://host/v1/v1/…`.
 */
export const gatewayRoot = (baseUrl: string): string =>
  baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");

/**
 * The Switchboard client: the generated types over openapi-fetch, with a bearer token from the
 * client credentials, an Idempotency-Key on every write that has none (so a retry never runs
 * twice), and retries of 429/503 as Retry-After says.
 */
export function createSwitchboard(options: SwitchboardOptions): Switchboard {
  const baseUrl = gatewayRoot(options.baseUrl);
  const fetcher = options.fetch ?? ((request: Request) => fetch(request));
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
        request.headers.set("Idempotency-Key", newIdempotencyKey());
      }
      return request;
    },
  };
  api.use(authenticate);
  return { api, token, ...resources(api) };
}
