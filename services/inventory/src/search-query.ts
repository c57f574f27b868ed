import {
  decodeCursor,
  type FieldError,
  FieldErrors,
  pageLimit,
  validationFailed,
} from "@switchboard/kit";
import { wire, type inventory } from "@switchboard/proto";
import type { NumberType } from "./area-codes.js";
import { capabilityMask, capabilityNames, type Capability } from "./capabilities.js";
import { parsePattern, type NumberPattern } from "./pattern.js";

/** Validated, normalised search filters. */
export interface SearchFilters {
  country?: string;
  type?: NumberType;
  /** E.164 prefix, with its '+'. */
  prefix?: string;
  pattern?: NumberPattern;
  minRepeat?: number;
  repeatDigit?: number;
  region?: string;
  /** Lower-cased. */
  locality?: string;
  areaCode?: string;
  /** Bitmask of required capabilities (0: none required). */
  capabilities: number;
}

export interface SearchQuery {
  filters: SearchFilters;
  limit: number;
  /** Keyset position: return numbers strictly after this E.164. */
  after?: string;
}

/** Validates a SearchNumbersRequest; every bad value becomes one `#/query/<name>` error. */
export function parseSearchRequest(request: inventory.SearchNumbersRequest): SearchQuery {
  const errors: FieldError[] = [];
  const fail = (name: string, detail: string) =>
    errors.push({ pointer: `#/query/${name}`, detail });
  const filters: SearchFilters = { capabilities: 0 };

  if (request.country !== undefined) {
    if (/^[A-Za-z]{2}$/.test(request.country)) filters.country = request.country.toUpperCase();
    else fail("country", "must be an ISO 3166-1 alpha-2 code such as US");
  }
  if (request.type !== undefined) {
    const type = wire.numberType.spell(request.type);
    if (type !== undefined) filters.type = type;
    else fail("type", `must be one of ${wire.numberType.values.join(", ")}`);
  }
  if (request.prefix !== undefined) {
    if (/^\+[1-9][0-9]{0,14}$/.test(request.prefix)) filters.prefix = request.prefix;
    else fail("prefix", "must be an E.164 prefix: '+' and 1 to 15 digits, e.g. +1415");
  }
  if (request.pattern !== undefined) {
    const parsed = parsePattern(request.pattern);
    if (parsed.ok) filters.pattern = parsed.pattern;
    else fail("pattern", parsed.detail);
  }
  if (request.minRepeat !== undefined) {
    if (Number.isInteger(request.minRepeat) && request.minRepeat >= 2 && request.minRepeat <= 10) {
      filters.minRepeat = request.minRepeat;
    } else fail("min_repeat", "must be an integer from 2 to 10");
  }
  if (request.repeatDigit !== undefined) {
    const digit = request.repeatDigit;
    if (Number.isInteger(digit) && digit >= 0 && digit <= 9) {
      filters.repeatDigit = digit;
      if (request.minRepeat === undefined) filters.minRepeat = 2;
    } else fail("repeat_digit", "must be a digit from 0 to 9");
  }
  if (request.region !== undefined) {
    if (/^[A-Za-z0-9]{1,3}$/.test(request.region)) filters.region = request.region.toUpperCase();
    else fail("region", "must be a state, province or nation code such as CA, ON or SCT");
  }
  if (request.locality !== undefined) {
    const locality = request.locality.trim();
    if (locality.length >= 1 && locality.length <= 100 && !/[\p{Cc}]/u.test(locality)) {
      filters.locality = locality.toLowerCase();
    } else fail("locality", "must be a city name of 1 to 100 characters");
  }
  if (request.areaCode !== undefined) {
    if (/^[0-9]{1,5}$/.test(request.areaCode)) filters.areaCode = request.areaCode;
    else fail("area_code", "must be 1 to 5 digits");
  }
  const names = request.capabilities.map(wire.capability.spell);
  if (names.includes(undefined)) {
    fail("capabilities", `must be a comma list of ${capabilityNames.join(", ")}`);
  } else filters.capabilities = capabilityMask(names as Capability[]);

  const limitErrors = new FieldErrors();
  const limit = pageLimit(request.limit, limitErrors);
  errors.push(...limitErrors.errors);
  if (errors.length > 0) throw validationFailed(errors);

  const query: SearchQuery = { filters, limit };
  if (request.cursor !== "") {
    const [after] = decodeCursor(request.cursor, searchBinding(filters), ["e164"]);
    query.after = after;
  }
  return query;
}

/** The canonical form of the filters a search cursor is bound to. */
export function searchBinding(filters: SearchFilters): string {
  return JSON.stringify([
    "search",
    filters.country ?? null,
    filters.type ?? null,
    filters.prefix ?? null,
    filters.pattern?.like ?? null,
    filters.minRepeat ?? null,
    filters.repeatDigit ?? null,
    filters.region ?? null,
    filters.locality ?? null,
    filters.areaCode ?? null,
    filters.capabilities,
  ]);
}
