import { wire } from "@switchboard/proto";
import { z } from "zod";
import { cursorParam, e164, idOf, limitParam, page, resourceId, timestamp } from "./common.js";

export const capabilityNames = wire.capability.values;
export const numberTypes = wire.numberType.values;

export const phoneNumber = z
  .object({
    id: resourceId("num"),
    number: e164,
    country: z.string(),
    region: z.string(),
    locality: z.string(),
    area_code: z.string(),
    type: z.enum(numberTypes),
    capabilities: z.array(z.enum(capabilityNames)),
    status: z.enum(wire.numberStatus.values),
    seat_id: resourceId("seat").nullable().optional(),
    assigned_at: timestamp.nullable().optional(),
  })
  .meta({ id: "PhoneNumber" });

export const hold = z
  .object({
    id: resourceId("hld"),
    number_id: resourceId("num"),
    number: e164,
    status: z.enum(wire.holdStatus.values),
    expires_at: timestamp,
    created_at: timestamp,
    released_at: timestamp.nullable(),
    converted_at: timestamp.nullable(),
  })
  .meta({ id: "Hold" });

const capabilityPattern = `(?:${capabilityNames.join("|")})`;
const commaList = z
  .string()
  .max(64)
  // What the pipe below accepts, stated as a pattern the document can carry.
  .regex(
    new RegExp(`^\\s*${capabilityPattern}\\s*(?:,\\s*${capabilityPattern}\\s*)*$`),
    `must be a comma list of ${capabilityNames.join(", ")}`,
  )
  .transform((value) => value.split(",").map((item) => item.trim()))
  .pipe(z.array(z.enum(capabilityNames)).min(1));

export const searchQuery = z
  .object({
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, "must be an ISO 3166-1 alpha-2 code")
      .meta({ maxLength: 2 })
      .optional()
      .describe("ISO 3166-1 alpha-2 country code"),
    type: z.enum(numberTypes).optional(),
    prefix: z
      .string()
      .regex(/^\+[1-9][0-9]{0,14}$/, "must be an E.164 prefix such as +1415")
      .meta({ maxLength: 16 })
      .optional()
      .describe("E.164 prefix, e.g. +1415 or +1415555"),
    pattern: z
      .string()
      .min(1)
      .max(32)
      .optional()
      .describe(
        "Matched against the national number: digits; ? one digit; * any run; letters map to keypad digits; ^ anchors the start, $ the end; unanchored matches anywhere.",
      ),
    min_repeat: z.coerce
      .number()
      .int()
      .min(2)
      .max(10)
      .optional()
      .describe("A run of at least this many identical consecutive digits"),
    repeat_digit: z.coerce
      .number()
      .int()
      .min(0)
      .max(9)
      .optional()
      .describe("Narrows min_repeat to one digit (alone it means min_repeat=2)"),
    region: z.string().min(1).max(64).optional().describe("State or province code"),
    locality: z.string().min(1).max(128).optional().describe("City, case-insensitive"),
    area_code: z
      .string()
      .regex(/^[0-9]{1,6}$/, "must be digits")
      .meta({ maxLength: 6 })
      .optional(),
    capabilities: commaList
      .optional()
      .describe("Comma list of voice,sms,mms,rcs; all must be present"),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const holdRequest = z
  .object({
    number: e164,
    ttl_seconds: z
      .number()
      .int()
      .min(60)
      .max(1800)
      .optional()
      .describe("Hold lifetime in seconds, 60–1800 (default 600)"),
  })
  .strict();

export const assignRequest = z
  .object({
    seat_id: idOf("seat", "must be a seat id").optional(),
  })
  .strict();

export const listQuery = z.object({ limit: limitParam, cursor: cursorParam }).strict();

export const numbersPage = page(phoneNumber).meta({ id: "PhoneNumberPage" });
export const assignResponse = hold.extend({ phone_number: phoneNumber }).meta({
  id: "AssignedHold",
});
