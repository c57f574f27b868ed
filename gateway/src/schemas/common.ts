import { z } from "zod";
import { story, storyId } from "./story.js";

export const e164 = z
  .string()
  .regex(/^\+[1-9][0-9]{1,14}$/, "must be an E.164 number such as +14155550100")
  // maxLength documents what the pattern already enforces (OWASP API4: every input is bounded).
  .meta({ examples: ["+14155550123"], maxLength: 16 });

/** A caller: its E.164 number, or "anonymous" when it withholds it (inbound calls). */
export const callerId = z
  .union([e164, z.literal("anonymous")])
  .describe('E.164, or "anonymous" for a caller who withholds the number (inbound calls)')
  .meta({ examples: ["+14155550123"] });

export const timestamp = z
  .string()
  .describe("RFC 3339 UTC time")
  .meta({ examples: ["2026-11-24T21:45:44.123Z"] });

/** The example id of a resource with this prefix (`num`, `hld`, …): the story's (story.ts). */
export const exampleId = (prefix: string) => storyId(prefix);

/** A resource id in a response: `<prefix>_<ULID>`, with an example for the reference. */
export const resourceId = (prefix: string) =>
  z
    .string()
    .describe(`${prefix}_<ULID>`)
    .meta({ examples: [exampleId(prefix)] });

export const limitParam = z.coerce
  .number()
  .int()
  .min(1)
  .max(200)
  .default(50)
  .describe("Page size, 1–200 (default 50).");

export const cursorParam = z
  .string()
  .min(1)
  .max(1024)
  .optional()
  .describe("Opaque cursor from the previous page's next_cursor; bound to the same filters.");

/** An optional RFC 3339 date-time in a query (a listing's time filter). */
export const dateTimeParam = (description: string, example = "2026-11-24T00:00:00Z") =>
  z.iso
    .datetime({
      offset: true,
      message: "must be an RFC 3339 date-time such as 2026-11-21T00:00:00Z",
    })
    .max(64)
    .optional()
    .describe(description)
    .meta({ examples: [example] });

/** A string of a response: what it is, and a real example for the reference. */
export const text = (description: string, example: string) =>
  z
    .string()
    .describe(description)
    .meta({ examples: [example] });

/** `{data, next_cursor, has_more}`: the one page shape of every listing. */
export const page = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item).describe("This page's items, in the listing's order"),
    next_cursor: z
      .string()
      .nullable()
      .describe("The cursor of the next page (pass it as `cursor`); null on the last page")
      .meta({ examples: [story.nextCursor] }),
    has_more: z.boolean().describe("Whether a next page exists"),
  });

/**
 * An id with this prefix in a request: `<prefix>_<ULID>`, refused otherwise with `message`
 * (maxLength only documents what the pattern enforces).
 */
export const idOf = (prefix: string, message = `must be an id starting with ${prefix}_`) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9a-z]{26}$`), message)
    .meta({ examples: [exampleId(prefix)], maxLength: prefix.length + 27 });

/** The path parameter `name`: an id with this prefix. */
export const idParam = <Name extends string>(prefix: string, name: Name) =>
  z.object({ [name]: idOf(prefix) } as Record<Name, z.ZodString>);

export const problemSchema = z
  .object({
    type: text(
      "{errors_url}/<kind>: a URL that documents the kind",
      "https://api.switchboard.test/v1/errors/not-found",
    ),
    title: text("Fixed per kind", "The resource was not found"),
    status: z.number().int().describe("The HTTP status of the reply"),
    code: text("The kind in SCREAMING_SNAKE case", "NOT_FOUND"),
    detail: text("What went wrong with this request, safe to show", "the call was not found"),
    instance: text(
      "urn:switchboard:request:<request_id>: the X-Request-Id of the reply",
      `urn:switchboard:request:${story.requestId}`,
    ),
    errors: z
      .array(
        z.object({
          pointer: text("JSON Pointer into the body, or #/query/<name> for a query field", "#/to"),
          detail: text(
            "What is wrong with that field",
            "must be an E.164 number such as +14155550100",
          ),
        }),
      )
      .optional()
      .describe("validation-failed: every field that failed, each with its reason"),
  })
  .catchall(z.unknown())
  .meta({ id: "Problem", description: "RFC 9457 problem details" });

/** `status_callback` on a call or message request: its events also go to url (docs/api.md). */
export const statusCallbackRequest = (kind: "call" | "message") =>
  z
    .object({
      url: z
        .string()
        .min(1)
        .max(2048)
        .describe(
          "https URL of a public host, checked like a webhook subscription's (422 unsafe-webhook-url)",
        )
        .meta({ examples: [story.statusCallbackUrl] }),
      events: z
        .array(
          z
            .string()
            .min(1)
            .max(100)
            .meta({ examples: [`${kind}.completed`] }),
        )
        .min(1)
        .max(100)
        .optional()
        .describe(`Which of the ${kind}'s events (${kind}.completed, ${kind}.*); default all`),
    })
    .strict()
    .describe(
      `Where this ${kind}'s events are also delivered, signed with the account's status-callback secret (GET /v1/api/webhooks/status-callback)`,
    );

/** `status_callback` as a call or message shows it. */
export const statusCallback = z
  .object({
    url: text("The URL the resource's events are also delivered to", story.statusCallbackUrl),
    events: z.array(z.string()).describe("Empty: every event of the resource"),
  })
  .nullable()
  .describe("Where the resource's events are also delivered; null when none");
