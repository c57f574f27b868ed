import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createPool, databaseUrlSetting } from "@switchboard/kit";
import { z } from "zod";
import { migrateInventory } from "./migrations.js";
import { parseNumberCsv } from "./number-csv.js";
import { importNumbers, inventoryCount, seedInventory } from "./seed.js";

/**
 * Migrates DATABASE_URL, then either
 * - `seed-cli.js --count N [--seed S]`: seeds N generated numbers (a demo or test inventory), or
 * - `seed-cli.js --csv FILE` (`-`: stdin): imports the numbers a carrier sold you
 *   (number-csv.ts), all or none; importing the same file again changes nothing.
 */
const seedSettings = z.object({ DATABASE_URL: databaseUrlSetting });
const { values } = parseArgs({
  options: {
    count: { type: "string", default: "10000" },
    seed: { type: "string", default: "1" },
    csv: { type: "string" },
  },
});
const parsedSettings = seedSettings.safeParse(process.env);
if (!parsedSettings.success) {
  console.error(parsedSettings.error.issues.map((issue) => issue.message).join("\n"));
  process.exit(2);
}
const url = parsedSettings.data.DATABASE_URL;

async function importCsv(pool: ReturnType<typeof createPool>, file: string): Promise<void> {
  const { numbers, errors } = parseNumberCsv(readFileSync(file === "-" ? 0 : file, "utf8"));
  if (errors.length > 0) {
    console.error(`${file}: ${errors.length} bad row(s), nothing imported:`);
    for (const error of errors.slice(0, 50)) console.error(`  ${error}`);
    if (errors.length > 50) console.error(`  … and ${errors.length - 50} more`);
    process.exitCode = 2;
    return;
  }
  const { inserted, updated, unchanged } = await importNumbers(pool, numbers);
  console.log(
    `imported ${numbers.length} numbers from ${file}: ${inserted} new, ${updated} updated, ` +
      `${unchanged} unchanged; the inventory holds ${await inventoryCount(pool)}`,
  );
}

async function seed(pool: ReturnType<typeof createPool>): Promise<void> {
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 1 || count > 5_000_000) {
    console.error("--count must be an integer from 1 to 5000000");
    process.exitCode = 2;
    return;
  }
  const started = performance.now();
  let reported = 0;
  const inserted = await seedInventory(pool, {
    count,
    seed: values.seed,
    onProgress: (n) => {
      if (n - reported >= 100_000) {
        reported = n;
        console.log(`  ${n} inserted…`);
      }
    },
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `seeded ${inserted} new numbers in ${seconds} s; the inventory holds ${await inventoryCount(pool)}`,
  );
}

const pool = createPool(url, { name: "inventory-seed", max: 2 });
try {
  await migrateInventory(pool);
  await (values.csv !== undefined ? importCsv(pool, values.csv) : seed(pool));
} finally {
  await pool.end();
}
