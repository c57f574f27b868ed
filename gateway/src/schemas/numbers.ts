import { wire } from "@switchboard/proto";
import { z } from "zod";
import {
  cursorParam,
  e164,
  idOf,
  limitParam,
  page,
  resourceId,
  text,
  timestamp,
} from "./common.js";
import { storyHold, storyNumber } from "./story.js";

export const capabilityNames = wire.capability.values;
export const numberTypes = wire.numberType.values;

export const phoneNumber = z
  .object({
    id: resourceId("num"),
    number: e164.describe("The number, E.164"),
    country: text("ISO 3166-1 alpha-2 country code", "US"),
    region: text("State or province code", "CA"),
    locality: text("City", "San Francisco"),
    area_code: text("The national area code", "415"),
    type: z.enum(numberTypes).describe("local, toll_free or mobile"),
    capabilities: z.array(z.enum(capabilityNames)).describe("What the number can do"),
    status: z
      .enum(wire.numberStatus.values)
      .describe("available, held (by a hold) or assigned (to an account)"),
    seat_id: resourceId("seat")
      .nullable()
      .optional()
      .describe("Assigned numbers: the seat it belongs to, if any"),
    assigned_at: timestamp.nullable().optional().describe("Assigned numbers: when it was assigned"),
  })
  .meta({
    id: "PhoneNumber",
    description: "A telephone number of the inventory: available, held or assigned",
    examples: [storyNumber],
  });

export const hold = z
  .object({
    id: resourceId("hld"),
    number_id: resourceId("num"),
    number: e164.describe("The held number, E.164"),
    status: z
      .enum(wire.holdStatus.values)
      .describe("active until assigned (converted), released or expired"),
    expires_at: timestamp.describe("When an active hold lapses"),
    created_at: timestamp.describe("When the number was held"),
    released_at: timestamp.nullable().describe("When the hold was released; null otherwise"),
    converted_at: timestamp.nullable().describe("When it was assigned; null otherwise"),
  })
  .meta({ id: "Hold", examples: [storyHold] });

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
    type: z.enum(numberTypes).optional().describe("Only numbers of this type"),
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
      .optional()
      .describe("Only numbers with this national area code (digits)"),
    capabilities: commaList
      .optional()
      .describe("Comma list of voice,sms,mms,rcs; all must be present"),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const holdRequest = z
  .object({
    number: e164.describe("An available number from a search"),
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
    seat_id: idOf("seat", "must be a seat id")
      .optional()
      .describe("The seat the number is assigned to (its calls' caller id)"),
  })
  .strict();

export const listQuery = z.object({ limit: limitParam, cursor: cursorParam }).strict();

export const numbersPage = page(phoneNumber).meta({ id: "PhoneNumberPage" });
export const assignResponse = hold
  .extend({ phone_number: phoneNumber.describe("The number, now assigned to the account") })
  .meta({ id: "AssignedHold" });
