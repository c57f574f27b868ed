import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { parseNumberCsv } from "../src/number-csv.js";

const run = promisify(execFile);
const seedCli = join(import.meta.dirname, "..", "dist", "seed-cli.js");

const carrierCsv = `e164,capabilities,region,locality
+12125550142,voice sms mms,NY,New York
+12125550143,voice;sms,,
+447700900123,voice|sms|mms|rcs,,
"+18005550100",voice,,
`;

describe("parseNumberCsv", () => {
  it("takes country, type and area code from the number's block", () => {
    const { numbers, errors } = parseNumberCsv(carrierCsv);
    expect(errors).toEqual([]);
    expect(numbers.map((n) => [n.e164, n.country, n.type, n.areaCode, n.capabilities])).toEqual([
      ["+12125550142", "US", "local", "212", 7],
      ["+12125550143", "US", "local", "212", 3],
      ["+447700900123", "GB", "mobile", "7700", 15],
      ["+18005550100", "US", "toll_free", "800", 1],
    ]);
    expect(numbers[0]).toMatchObject({ region: "NY", locality: "New York" });
    expect(numbers[1]).toMatchObject({ region: "NY", locality: null });
  });

  it("reports every bad row with its line, and a bad header alone", () => {
    const { errors } = parseNumberCsv(
      [
        "e164,capabilities,type",
        "2125550142,voice,", // no +
        "+12125550142,fax,", // unknown capability
        "+19995550142,voice,", // no block
        "+1212555014,voice,", // 9 national digits
        "+12125550144,voice,mobile", // wrong type
        "+12125550145,voice,local",
        "+12125550145,sms,", // repeated
      ].join("\n"),
    );
    expect(errors).toEqual([
      'line 2: e164 "2125550142" is not an E.164 number (+ and 7–15 digits)',
      'line 3: capabilities "fax" must name voice, sms, mms or rcs',
      "line 4: +19995550142 is in no numbering block the inventory serves (area-codes.ts)",
      "line 5: +1212555014 has 9 national digits, not a valid length for +1",
      "line 6: +12125550144 is a local number, not mobile",
      "line 8: +12125550145 repeats line 7",
    ]);
    expect(parseNumberCsv("number,caps\n+12125550142,voice\n").errors).toEqual([
      "header: missing column(s) e164, capabilities; unknown column(s) number, caps",
    ]);
  });
});

describe("seed-cli --csv (a real inventory, on PostgreSQL)", () => {
  let database: TestDatabase;
  let pool: Pool;
  const dir = mkdtempSync(join(tmpdir(), "sb-numbers-"));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const importCsv = (path: string) =>
    run(process.execPath, [seedCli, "--csv", path], {
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: database.url },
    }).then(
      ({ stdout }) => ({ code: 0, out: stdout }),
      (error: { code: number; stderr: string }) => ({ code: error.code, out: error.stderr }),
    );
  const rows = async () =>
    (
      await pool.query<{ e164: string; capabilities: number; assigned_account: string | null }>(
        "SELECT e164, capabilities, assigned_account FROM inventory.numbers ORDER BY e164",
      )
    ).rows;

  beforeAll(async () => {
    database = await createRealTestDatabase("numimport");
    pool = createPool(database.url, { name: "numimport-test", max: 2 });
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  it("imports the numbers, and importing the same file again changes nothing", async () => {
    const path = file("carrier.csv", carrierCsv);
    const first = await importCsv(path);
    expect(first).toMatchObject({ code: 0 });
    expect(first.out).toContain("4 new, 0 updated, 0 unchanged");
    const before = await rows();
    expect(before.map((row) => row.e164)).toEqual([
      "+12125550142",
      "+12125550143",
      "+18005550100",
      "+447700900123",
    ]);
    const second = await importCsv(path);
    expect(second.out).toContain("0 new, 0 updated, 4 unchanged");
    expect(await rows()).toEqual(before);
  });

  it("updates a number's capabilities and keeps its assignment", async () => {
    await pool.query(
      "UPDATE inventory.numbers SET assigned_account = 'acct_1', assigned_at = now() WHERE e164 = '+12125550143'",
    );
    const result = await importCsv(
      file("upgrade.csv", "e164,capabilities\n+12125550143,voice sms mms\n"),
    );
    expect(result.out).toContain("0 new, 1 updated, 0 unchanged");
    expect((await rows()).find((row) => row.e164 === "+12125550143")).toEqual({
      e164: "+12125550143",
      capabilities: 7,
      assigned_account: "acct_1",
    });
  });

  it("refuses a file with a bad row with exit 2, naming the line, and imports none of it", async () => {
    const before = await rows();
    const result = await importCsv(
      file("bad.csv", "e164,capabilities\n+12125550199,voice\n+1212555,voice\n"),
    );
    expect(result.code).toBe(2);
    expect(result.out).toContain("line 3:");
    expect(await rows()).toEqual(before);
  });
});
