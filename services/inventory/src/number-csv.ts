import { parse } from "csv-parse/sync";
import { blocks, callingCodeOf, e164PrefixOf, type NumberBlock } from "./area-codes.js";
import { capabilityMask, isCapability, type Capability } from "./capabilities.js";
import type { GeneratedNumber } from "./generator.js";

/**
 * A carrier's list of the numbers it sold you, as CSV with a header row:
 *
 *     e164,capabilities,region,locality
 *     +12125550142,voice sms mms,NY,New York
 *
 * `e164` and `capabilities` (names separated by spaces, `;` or `|`: voice, sms, mms, rcs) are
 * required; `type` (checked against the number's block), `region` and `locality` are optional.
 * A number must fall in a numbering block the inventory serves (area-codes.ts): its country,
 * type and area code come from there, its region too unless the row gives one.
 */
export interface NumberCsvResult {
  numbers: GeneratedNumber[];
  /** `line N: why`, one per rejected row; any error means nothing may be imported. */
  errors: string[];
}

const e164Pattern = /^\+[1-9][0-9]{6,14}$/;
const requiredColumns = ["e164", "capabilities"] as const;
const knownColumns = new Set(["e164", "capabilities", "type", "region", "locality"]);

/** The block with the longest E.164 prefix that starts `e164`. */
function blockOf(e164: string): NumberBlock | undefined {
  let best: NumberBlock | undefined;
  for (const block of blocks) {
    const prefix = e164PrefixOf(block);
    if (e164.startsWith(prefix) && prefix.length > (best ? e164PrefixOf(best).length : 0)) {
      best = block;
    }
  }
  return best;
}

/** National significant number lengths of the calling codes served: NANP 10, UK 9–10. */
const nationalLengthOk = (callingCode: string, national: string): boolean =>
  callingCode === "1" ? national.length === 10 : national.length >= 9 && national.length <= 10;

function numberOf(row: Record<string, string>): GeneratedNumber | string {
  const e164 = (row.e164 ?? "").trim();
  if (!e164Pattern.test(e164)) return `e164 "${e164}" is not an E.164 number (+ and 7–15 digits)`;
  const block = blockOf(e164);
  if (!block) return `${e164} is in no numbering block the inventory serves (area-codes.ts)`;
  const callingCode = callingCodeOf(block.country)!;
  const national = e164.slice(1 + callingCode.length);
  if (!nationalLengthOk(callingCode, national)) {
    return `${e164} has ${national.length} national digits, not a valid length for +${callingCode}`;
  }
  const type = row.type?.trim();
  if (type && type !== block.type) return `${e164} is a ${block.type} number, not ${type}`;
  const names = (row.capabilities ?? "").split(/[\s;|]+/).filter((name) => name !== "");
  const unknown = names.filter((name) => !isCapability(name));
  if (names.length === 0 || unknown.length > 0) {
    return `capabilities "${row.capabilities ?? ""}" must name voice, sms, mms or rcs`;
  }
  return {
    e164,
    callingCode,
    national,
    country: block.country,
    region: row.region?.trim() || block.region,
    locality: row.locality?.trim() || null,
    areaCode: block.areaCode,
    type: block.type,
    capabilities: capabilityMask(names as Capability[]),
  };
}

/** Parses and validates the whole file; every bad row is reported, not only the first. */
export function parseNumberCsv(text: string): NumberCsvResult {
  let records: { record: Record<string, string>; info: { lines: number } }[];
  try {
    records = parse(text, {
      columns: (header: string[]) => header.map((name) => name.trim().toLowerCase()),
      skip_empty_lines: true,
      trim: true,
      bom: true,
      info: true,
    });
  } catch (error) {
    return { numbers: [], errors: [`not valid CSV: ${(error as Error).message}`] };
  }
  const header = records.length > 0 ? Object.keys(records[0]!.record) : [];
  const missing = requiredColumns.filter((name) => !header.includes(name));
  const extra = header.filter((name) => !knownColumns.has(name));
  if (records.length === 0) return { numbers: [], errors: ["no rows after the header"] };
  if (missing.length > 0 || extra.length > 0) {
    const problems = [
      ...(missing.length > 0 ? [`missing column(s) ${missing.join(", ")}`] : []),
      ...(extra.length > 0 ? [`unknown column(s) ${extra.join(", ")}`] : []),
    ];
    return { numbers: [], errors: [`header: ${problems.join("; ")}`] };
  }
  const numbers: GeneratedNumber[] = [];
  const errors: string[] = [];
  const firstLine = new Map<string, number>();
  records.forEach(({ record, info: { lines: line } }) => {
    const result = numberOf(record);
    if (typeof result === "string") return void errors.push(`line ${line}: ${result}`);
    const earlier = firstLine.get(result.e164);
    if (earlier !== undefined) {
      return void errors.push(`line ${line}: ${result.e164} repeats line ${earlier}`);
    }
    firstLine.set(result.e164, line);
    numbers.push(result);
  });
  return { numbers, errors };
}
