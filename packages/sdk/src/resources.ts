import type { Client } from "openapi-fetch";
import { PagedList } from "./pages.js";
import { unwrap } from "./problems.js";
import type { components, operations, paths } from "./schema.js";

type Schemas = components["schemas"];
type QueryOf<O extends keyof operations> = NonNullable<operations[O]["parameters"]["query"]>;
type JsonOf<
  O extends keyof operations,
  S extends keyof operations[O]["responses"],
> = operations[O]["responses"][S] extends { content: { "application/json": infer B } } ? B : never;

/** Options of one write. */
export interface WriteOptions {
  /** The Idempotency-Key to send (default: a new UUID, kept across the SDK's own retries). */
  idempotencyKey?: string;
}

const keyHeader = (options?: WriteOptions) =>
  options?.idempotencyKey ? { "Idempotency-Key": options.idempotencyKey } : {};

/** Helpers for the common calls; every problem is thrown as a SwitchboardProblem. */
export function resources(api: Client<paths>) {
  return {
    numbers: {
      /** Available numbers; await it for the first page, `for await` it for every number. */
      search: (query: Omit<QueryOf<"searchNumbers">, "cursor"> = {}) =>
        new PagedList<JsonOf<"searchNumbers", 200>>(async (cursor) =>
          unwrap(
            await api.GET("/v1/api/numbers/search", { params: { query: { ...query, cursor } } }),
          ),
        ),
      /** Holds an available number for the account (assign or release the hold next). */
      hold: async (body: Schemas["HoldNumberRequest"], options?: WriteOptions) =>
        unwrap(await api.POST("/v1/api/numbers/hold", { body, headers: keyHeader(options) })),
    },
    calls: {
      /** Places an outbound call (201, `queued`). */
      place: async (body: Schemas["PlaceOutboundCallRequest"], options?: WriteOptions) =>
        unwrap(await api.POST("/v1/api/calls/outbound", { body, headers: keyHeader(options) })),
    },
    messages: {
      /** Sends a message from an approved template (202, `queued`). */
      send: async (body: Schemas["SendMessageRequest"], options?: WriteOptions) =>
        unwrap(await api.POST("/v1/api/messages/send", { body, headers: keyHeader(options) })),
    },
    usage: {
      /** Usage records, newest first; await it for the first page, `for await` it for all. */
      list: (query: Omit<QueryOf<"listUsageEvents">, "cursor"> = {}) =>
        new PagedList<JsonOf<"listUsageEvents", 200>>(async (cursor) =>
          unwrap(
            await api.GET("/v1/api/usage/events", { params: { query: { ...query, cursor } } }),
          ),
        ),
    },
  };
}

export type Resources = ReturnType<typeof resources>;
