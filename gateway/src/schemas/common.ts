import { z } from "zod";

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

/** The example id of a resource with this prefix (`num`, `hld`, …): `<prefix>_<ULID>`. */
export const exampleId = (prefix: string) => `${prefix}_01jd2k8w7c3q9v0m5n6p7r8s9t`;

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

/** `{data, next_cursor, has_more}`: the one page shape of every listing. */
export const page = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    next_cursor: z.string().nullable(),
    has_more: z.boolean(),
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
    type: z.string().describe("{errors_url}/<kind>"),
    title: z.string(),
    status: z.number().int(),
    code: z.string().describe("The kind in SCREAMING_SNAKE case"),
    detail: z.string(),
    instance: z.string().describe("urn:switchboard:request:<request_id>"),
    errors: z.array(z.object({ pointer: z.string(), detail: z.string() })).optional(),
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
        ),
      events: z
        .array(z.string().min(1).max(100))
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
    url: z.string(),
    events: z.array(z.string()).describe("Empty: every event of the resource"),
  })
  .nullable()
  .describe("Where the resource's events are also delivered; null when none");
