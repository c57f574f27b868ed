import { newId, type Pool } from "@switchboard/kit";
import { generateNumbers, type GeneratedNumber } from "./generator.js";
import { digitRuns } from "./runs.js";

const insertBatch = `
INSERT INTO inventory.numbers
  (id, e164, calling_code, national, country, region, locality, area_code, type, capabilities,
   max_run, digit_runs)
SELECT id, e164, calling_code, national, country, region, locality, area_code, type,
       capabilities, max_run, digit_runs::smallint[]
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
              $8::text[], $9::text[], $10::smallint[], $11::smallint[], $12::text[])
    AS t(id, e164, calling_code, national, country, region, locality, area_code, type,
         capabilities, max_run, digit_runs)
ON CONFLICT (calling_code, national) DO NOTHING`;

/** Inserts numbers in multi-row batches; returns how many were new (existing ones are kept). */
export async function insertNumbers(
  pool: Pool,
  numbers: readonly GeneratedNumber[],
): Promise<number> {
  const columns: unknown[][] = Array.from({ length: 12 }, () => []);
  for (const n of numbers) {
    const runs = digitRuns(n.national);
    const values = [
      newId("num"),
      n.e164,
      n.callingCode,
      n.national,
      n.country,
      n.region,
      n.locality,
      n.areaCode,
      n.type,
      n.capabilities,
      runs.maxRun,
      `{${runs.byDigit.join(",")}}`,
    ];
    values.forEach((value, i) => columns[i]!.push(value));
  }
  const result = await pool.query(insertBatch, columns);
  return result.rowCount ?? 0;
}

/**
 * Seeds `count` generated numbers (deterministic from `seed`; seeding again with the same seed
 * adds nothing), then refreshes the planner statistics. Returns the number of rows inserted.
 */
export async function seedInventory(
  pool: Pool,
  options: {
    count: number;
    seed?: number | string;
    batchSize?: number;
    onProgress?: (inserted: number) => void;
  },
): Promise<number> {
  const batchSize = options.batchSize ?? 5_000;
  let inserted = 0;
  let batch: GeneratedNumber[] = [];
  for (const number of generateNumbers({ count: options.count, seed: options.seed ?? 1 })) {
    batch.push(number);
    if (batch.length === batchSize) {
      inserted += await insertNumbers(pool, batch);
      batch = [];
      options.onProgress?.(inserted);
    }
  }
  if (batch.length > 0) inserted += await insertNumbers(pool, batch);
  await pool.query("VACUUM (ANALYZE) inventory.numbers");
  return inserted;
}

/** How many numbers the inventory holds, in any state. */
export async function inventoryCount(pool: Pool): Promise<number> {
  const result = await pool.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM inventory.numbers",
  );
  return result.rows[0]?.count ?? 0;
}
