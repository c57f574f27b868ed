import type { wire } from "@switchboard/proto";

/**
 * Reference data for the inventory generator: real calling codes, area codes, regions
 * (ISO 3166-2 subdivision codes; UK nations ENG/SCT/WLS/NIR) and localities.
 * Every national significant number the generator makes has 10 digits.
 */
export type NumberType = wire.NumberTypeValue;

export interface Country {
  iso: string;
  callingCode: string;
}

/** The countries the inventory serves. Mirrored by the `inventory.countries` table. */
export const countries: readonly Country[] = [
  { iso: "US", callingCode: "1" },
  { iso: "CA", callingCode: "1" },
  { iso: "GB", callingCode: "44" },
];

export const callingCodeOf = (iso: string): string | undefined =>
  countries.find((c) => c.iso === iso)?.callingCode;

export const allCallingCodes: readonly string[] = [...new Set(countries.map((c) => c.callingCode))];

/** A block of numbers sharing a national prefix (the area code, or a mobile/toll-free prefix). */
export interface NumberBlock {
  country: string;
  type: NumberType;
  areaCode: string;
  region: string | null;
  localities: readonly string[];
  /** Relative share of the generated inventory. */
  weight: number;
}

const local = (
  country: string,
  region: string,
  areaCode: string,
  localities: string[],
  weight = 1,
): NumberBlock => ({ country, type: "local", areaCode, region, localities, weight });

const usLocal = (region: string, areaCode: string, ...localities: string[]) =>
  local("US", region, areaCode, localities);
const caLocal = (region: string, areaCode: string, ...localities: string[]) =>
  local("CA", region, areaCode, localities);

export const blocks: readonly NumberBlock[] = [
  // United States (NANP, +1): NPA + NXX + XXXX
  usLocal("NJ", "201", "Jersey City", "Hackensack"),
  usLocal("DC", "202", "Washington"),
  usLocal("CT", "203", "New Haven", "Bridgeport", "Stamford"),
  usLocal("AL", "205", "Birmingham", "Tuscaloosa"),
  usLocal("WA", "206", "Seattle"),
  usLocal("ME", "207", "Portland", "Bangor"),
  usLocal("ID", "208", "Boise"),
  usLocal("NY", "212", "New York"),
  usLocal("CA", "213", "Los Angeles"),
  usLocal("TX", "214", "Dallas"),
  usLocal("PA", "215", "Philadelphia"),
  usLocal("OH", "216", "Cleveland"),
  usLocal("IL", "217", "Springfield", "Champaign"),
  usLocal("MD", "301", "Bethesda", "Silver Spring"),
  usLocal("DE", "302", "Wilmington", "Dover"),
  usLocal("CO", "303", "Denver", "Boulder"),
  usLocal("WV", "304", "Charleston", "Huntington"),
  usLocal("FL", "305", "Miami"),
  usLocal("WY", "307", "Cheyenne", "Casper"),
  usLocal("IL", "312", "Chicago"),
  usLocal("MI", "313", "Detroit"),
  usLocal("MO", "314", "St. Louis"),
  usLocal("KS", "316", "Wichita"),
  usLocal("IN", "317", "Indianapolis"),
  usLocal("RI", "401", "Providence"),
  usLocal("NE", "402", "Omaha", "Lincoln"),
  usLocal("GA", "404", "Atlanta"),
  usLocal("OK", "405", "Oklahoma City", "Norman"),
  usLocal("MT", "406", "Billings", "Missoula"),
  usLocal("FL", "407", "Orlando"),
  usLocal("CA", "408", "San Jose"),
  usLocal("MD", "410", "Baltimore", "Annapolis"),
  usLocal("PA", "412", "Pittsburgh"),
  usLocal("WI", "414", "Milwaukee"),
  usLocal("CA", "415", "San Francisco"),
  usLocal("AR", "501", "Little Rock"),
  usLocal("KY", "502", "Louisville"),
  usLocal("OR", "503", "Portland", "Salem"),
  usLocal("LA", "504", "New Orleans"),
  usLocal("NM", "505", "Albuquerque", "Santa Fe"),
  usLocal("CA", "510", "Oakland", "Berkeley"),
  usLocal("TX", "512", "Austin"),
  usLocal("IA", "515", "Des Moines"),
  usLocal("MS", "601", "Jackson"),
  usLocal("AZ", "602", "Phoenix"),
  usLocal("NH", "603", "Manchester", "Concord"),
  usLocal("SD", "605", "Sioux Falls", "Rapid City"),
  usLocal("MN", "612", "Minneapolis"),
  usLocal("TN", "615", "Nashville"),
  usLocal("MA", "617", "Boston", "Cambridge"),
  usLocal("CA", "619", "San Diego"),
  usLocal("NY", "646", "New York"),
  usLocal("ND", "701", "Fargo", "Bismarck"),
  usLocal("NV", "702", "Las Vegas"),
  usLocal("NC", "704", "Charlotte"),
  usLocal("TX", "713", "Houston"),
  usLocal("NY", "718", "Brooklyn", "Queens", "Bronx"),
  usLocal("CO", "720", "Denver"),
  usLocal("UT", "801", "Salt Lake City", "Provo"),
  usLocal("VT", "802", "Burlington"),
  usLocal("SC", "803", "Columbia"),
  usLocal("HI", "808", "Honolulu"),
  usLocal("FL", "813", "Tampa"),
  usLocal("MO", "816", "Kansas City"),
  usLocal("SC", "843", "Charleston"),
  usLocal("TN", "901", "Memphis"),
  usLocal("AK", "907", "Anchorage", "Juneau"),
  usLocal("CA", "916", "Sacramento"),
  usLocal("NC", "919", "Raleigh", "Durham"),
  // Canada (NANP, +1)
  caLocal("MB", "204", "Winnipeg"),
  caLocal("BC", "250", "Victoria", "Kelowna"),
  caLocal("SK", "306", "Regina", "Saskatoon"),
  caLocal("AB", "403", "Calgary"),
  caLocal("ON", "416", "Toronto"),
  caLocal("QC", "418", "Quebec City"),
  caLocal("NB", "506", "Moncton", "Fredericton"),
  caLocal("QC", "514", "Montreal"),
  caLocal("ON", "519", "London", "Windsor"),
  caLocal("BC", "604", "Vancouver"),
  caLocal("ON", "613", "Ottawa"),
  caLocal("ON", "647", "Toronto"),
  caLocal("NL", "709", "St. John's"),
  caLocal("AB", "780", "Edmonton"),
  caLocal("YT", "867", "Whitehorse"),
  caLocal("NS", "902", "Halifax"),
  caLocal("ON", "905", "Hamilton", "Mississauga"),
  // United Kingdom (+44): geographic area codes, national numbers of 10 digits
  local("GB", "ENG", "20", ["London"], 4),
  local("GB", "ENG", "113", ["Leeds"]),
  local("GB", "ENG", "114", ["Sheffield"]),
  local("GB", "ENG", "115", ["Nottingham"]),
  local("GB", "ENG", "116", ["Leicester"]),
  local("GB", "ENG", "117", ["Bristol"]),
  local("GB", "ENG", "118", ["Reading"]),
  local("GB", "ENG", "121", ["Birmingham"], 2),
  local("GB", "SCT", "131", ["Edinburgh"]),
  local("GB", "SCT", "141", ["Glasgow"]),
  local("GB", "ENG", "151", ["Liverpool"]),
  local("GB", "ENG", "161", ["Manchester"], 2),
  local("GB", "ENG", "191", ["Newcastle upon Tyne", "Sunderland"]),
  local("GB", "ENG", "1223", ["Cambridge"]),
  local("GB", "SCT", "1224", ["Aberdeen"]),
  local("GB", "ENG", "1865", ["Oxford"]),
  local("GB", "NIR", "28", ["Belfast"]),
  local("GB", "WLS", "29", ["Cardiff"]),
  // United Kingdom mobile (07xxx)
  ...["7400", "7500", "7700", "7800", "7900", "7911", "7958"].map((areaCode): NumberBlock => ({
    country: "GB",
    type: "mobile",
    areaCode,
    region: null,
    localities: [],
    weight: 2,
  })),
  // Toll-free: NANP 8XX and UK 0800/0808
  ...["800", "833", "844", "855", "866", "877", "888"].map((areaCode): NumberBlock => ({
    country: "US",
    type: "toll_free",
    areaCode,
    region: null,
    localities: [],
    weight: 1,
  })),
  ...["800", "808"].map((areaCode): NumberBlock => ({
    country: "GB",
    type: "toll_free",
    areaCode,
    region: null,
    localities: [],
    weight: 1,
  })),
];

export const e164PrefixOf = (block: NumberBlock): string =>
  `+${callingCodeOf(block.country) ?? ""}${block.areaCode}`;
